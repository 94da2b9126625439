// ledger/run_result_schema: the shape of a run's result JSON (runs.hpp documents both kinds), checked
// before a cached result is trusted. A number that may be non-finite (a loss, a gradient norm, a
// probe value of a diverged run) may be null, as the JSON writer stores NaN and inf; a string, a
// boolean, an array of the wrong length or a missing required field is a problem.
#pragma once
#include <optional>
#include <string>

#include "scalelab/core/config_section.hpp"
#include "scalelab/ledger/runs.hpp"

namespace scalelab::ledger {

// The first problem of `result` as a result of a run of `kind`, e.g.
// `curve[3][1] = "abc": expected a number or null`; nullopt if it matches. User data in the text is
// quoted for a message (core/quote.hpp).
std::optional<std::string> run_result_problem(RunKind kind, const Json& result);

}  // namespace scalelab::ledger
