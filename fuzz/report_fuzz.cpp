// libFuzzer target: report: inline_svg, read_ledger / read_claim, the HTML and Markdown renderers
// and the gnuplot scripts, with the oracles of fuzz/report_feed.hpp.
#include "report_feed.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return scalelab::fuzz::run_one(scalelab::fuzz::feed_report, data, size);
}
