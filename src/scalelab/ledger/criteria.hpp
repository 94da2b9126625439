// ledger/criteria: every claim's criterion, as a pure function from measurements to a verdict:
// criteria_init.hpp (claims measured at initialisation) and criteria_training.hpp (claims that
// train). Where a seed's claim is vague, the number that makes it decidable is named there
// ("dominates", "unusable", "slows convergence", ...).
#pragma once
#include "scalelab/ledger/criteria_init.hpp"
#include "scalelab/ledger/criteria_training.hpp"
