// Shared by the criteria tests: thresholds nudged to either side, substring checks.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "scalelab/core/error.hpp"
#include "scalelab/ledger/criteria.hpp"
#include "scalelab/ledger/verdict.hpp"

namespace scalelab::ledger::criteria_test {

// Just below / just above a (positive) threshold.
inline double below(double t) { return t * (1.0 - 1e-6); }
inline double above(double t) { return t * (1.0 + 1e-6); }

inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
inline constexpr double kInf = std::numeric_limits<double>::infinity();

}  // namespace scalelab::ledger::criteria_test
