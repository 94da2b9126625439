// report/how_sure: how firm a verdict is, in one word a reader can scan, with what it rests on.
//
//   provisional  quick mode: small models and grids
//   open         not testable here (the seeds disagree, or nothing could be measured)
//   marginal     moving every seed by its own spread changes the verdict (ledger rule: robustness)
//   firm         none of the above
#pragma once
#include <cstdint>
#include <string>

#include "scalelab/report/document.hpp"
#include "scalelab/report/ledger_files.hpp"

namespace scalelab::report {

struct HowSure {
  std::string word;     // provisional | open | marginal | firm
  int64_t seeds = 0;    // seeds per arm (the most any arm used)
  int64_t failed = 0;   // failed seeds in the claim's measurements (the most of any measurement)
};

HowSure how_sure(const ClaimRecord& c);

// The word as a badge (coloured in HTML, [word] in Markdown).
Span how_sure_badge(const HowSure& h);

// "8 seeds per arm, none failed; marginal: a seed shift reads “does not hold”".
std::string how_sure_detail(const ClaimRecord& c, const HowSure& h);

}  // namespace scalelab::report
