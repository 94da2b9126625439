#include "scalelab/report/how_sure.hpp"

#include <algorithm>

namespace scalelab::report {

HowSure how_sure(const ClaimRecord& c) {
  HowSure h;
  for (const Arm& a : c.arms) h.seeds = std::max<int64_t>(h.seeds, static_cast<int64_t>(a.seeds.size()));
  for (const Measurement& m : c.measurements) h.failed = std::max(h.failed, m.failed);
  h.word = c.provisional ? "provisional" : c.verdict == Verdict::not_testable ? "open" : c.marginal ? "marginal" : "firm";
  return h;
}

Span how_sure_badge(const HowSure& h) { return {Span::badge, h.word, {}}; }

std::string how_sure_detail(const ClaimRecord& c, const HowSure& h) {
  std::string s;
  if (h.seeds > 0) s = std::to_string(h.seeds) + (h.seeds == 1 ? " seed" : " seeds") + " per arm";
  if (h.seeds > 0)
    s += h.failed == 0 ? ", none failed" : ", " + std::to_string(h.failed) + " failed (counted as the worst value)";
  if (c.marginal)
    s += std::string(s.empty() ? "" : "; ") + "marginal: with every seed moved by its own spread it reads “" +
         (c.marginal_reads.empty() ? std::string("otherwise") : c.marginal_reads) + "”";
  if (c.provisional) s += std::string(s.empty() ? "" : "; ") + "quick mode";
  return s;
}

}  // namespace scalelab::report
