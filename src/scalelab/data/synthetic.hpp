// data/synthetic: the toy tasks of the Annotated Transformer (copy) and friends, for tests and
// quick runs. Symbols are ids kNumSpecialTokens .. kNumSpecialTokens + symbols - 1.
//   copy:    y = x            reverse: y = reversed x            sort: y = sorted x
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "scalelab/data/example.hpp"

namespace scalelab {

enum class SyntheticTask { copy, reverse, sort };

struct SyntheticOptions {
  SyntheticTask task = SyntheticTask::copy;
  int64_t symbols = 10;   // distinct symbols
  int64_t min_len = 1;
  int64_t max_len = 10;
  int64_t count = 1000;
  uint64_t seed = 1;
};

std::vector<Example> make_synthetic(const SyntheticOptions& options);
SyntheticTask parse_synthetic_task(const std::string& name);  // throws Error for unknown names

}  // namespace scalelab
