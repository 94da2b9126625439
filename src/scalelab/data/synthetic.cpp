#include "scalelab/data/synthetic.hpp"

#include <algorithm>

#include "scalelab/core/error.hpp"
#include "scalelab/core/rng.hpp"

namespace scalelab {

std::vector<Example> make_synthetic(const SyntheticOptions& o) {
  SL_CHECK(o.symbols >= 1, "data.symbols = ", o.symbols, ": must be >= 1");
  SL_CHECK(o.min_len >= 1 && o.max_len >= o.min_len, "data.min_len = ", o.min_len,
           ", data.max_len = ", o.max_len, ": need 1 <= min_len <= max_len");
  Rng rng(o.seed);
  std::vector<Example> out(o.count);
  for (Example& e : out) {
    const int64_t len = o.min_len + static_cast<int64_t>(rng.below(o.max_len - o.min_len + 1));
    e.src.resize(len);
    for (int32_t& t : e.src) t = kNumSpecialTokens + static_cast<int32_t>(rng.below(o.symbols));
    e.tgt = e.src;
    if (o.task == SyntheticTask::reverse) std::reverse(e.tgt.begin(), e.tgt.end());
    if (o.task == SyntheticTask::sort) std::sort(e.tgt.begin(), e.tgt.end());
  }
  return out;
}

SyntheticTask parse_synthetic_task(const std::string& name) {
  if (name == "copy") return SyntheticTask::copy;
  if (name == "reverse") return SyntheticTask::reverse;
  if (name == "sort") return SyntheticTask::sort;
  throw_error("unknown synthetic task ", name, " (allowed: copy, reverse, sort)");
}

}  // namespace scalelab
