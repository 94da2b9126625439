// The benchmark programs' flag values: a value parsed whole and checked against its range, or one
// error (scalelab::Error) naming the flag, the value and what is allowed
// (tests/bench/test_bench_args.sh).
#pragma once
#include <cstdlib>
#include <string>

#include "scalelab/core/error.hpp"

namespace scalelab::bench {

// The value after the flag argv[i] (i moves past it), or one error naming the flag and the usage.
inline std::string value_after(int argc, char** argv, int& i, const char* usage) {
  SL_CHECK(i + 1 < argc, argv[i], " needs a value; ", usage);
  return argv[++i];
}

// `text` (the value of `flag`) as a number within [lo, hi].
inline double parse_number(const std::string& flag, const std::string& text, double lo, double hi) {
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  SL_CHECK(!text.empty() && end == text.c_str() + text.size() && value >= lo && value <= hi, flag,
           " = \"", text, "\" is not allowed: use a number from ", lo, " to ", hi);
  return value;
}

// `text` (the value of `flag`) as a whole number within [lo, hi].
inline int parse_whole_number(const std::string& flag, const std::string& text, int lo, int hi) {
  char* end = nullptr;
  const long value = std::strtol(text.c_str(), &end, 10);
  SL_CHECK(!text.empty() && end == text.c_str() + text.size() && value >= lo && value <= hi, flag,
           " = \"", text, "\" is not allowed: use a whole number from ", lo, " to ", hi);
  return static_cast<int>(value);
}

}  // namespace scalelab::bench
