// The oracles of the fuzz target `report` (fuzz/report_feed.hpp) can fail: each is given text of
// the kind a broken escaping function would produce and must reject it, and accepts the renderer's
// own output. An oracle that never fails would make the fuzzing figures worthless.
#include <gtest/gtest.h>

#include "fuzz/report_feed.hpp"

namespace scalelab::fuzz {
namespace {

TEST(ReportOracles, GnuplotOracleRejectsSubstitutionAndRunawayStrings) {
  const std::string good = "set xlabel 'a `id` '' b'\nplot '/data/s.dat' using 1:2 title 'x'\n";
  EXPECT_NO_THROW(require_inert_gnuplot(good, "/data"));
  for (const char* bad : {"set xlabel \"`id`\"\n", "set xlabel 'a' `id`\n", "set xlabel 'a\n", "!touch x\n",
                          "set xlabel 'a'; system('id')\n", "set xlabel @m\n", "plot '<touch x' using 1:2\n",
                          "set xlabel 'a' # rest\n", "plot '/data/s.dat' using 1:2 title 'x', '< id' using 1\n"})
    EXPECT_THROW(require_inert_gnuplot(bad, "/data"), InvariantFailed) << bad;
}

TEST(ReportOracles, MarkdownOracleRejectsLiveMarkup) {
  EXPECT_NO_THROW(require_inert_markdown("## A &#60;b&#62; d_model\n\n- [E4](#claim-E4) x\n\n| a | b |\n|---|---:|\n| 1 | 2 |\n"));
  for (const char* bad : {"text [click](javascript:alert(1))\n", "![x](https://evil/x.png)\n", "a <script>x</script>\n",
                          "see https://evil.example\n", "www.evil.example\n", "a _b_ c\n", "    code\n", "1. list\n",
                          "| a | b |\n|---|---|\n| 1 | 2 | 3 |\n", "```json\n{}\n", "a `code` b\n", "* item\n"})
    EXPECT_THROW(require_inert_markdown(bad), InvariantFailed) << bad;
}

TEST(ReportOracles, HtmlOracleRejectsHandlersScriptsAndOutsideReferences) {
  const std::set<std::string>& page = page_element_names();
  EXPECT_NO_THROW(require_inert_html("<p class=\"note\"><a href=\"#x\">a &lt; b</a></p>", page));
  for (const char* bad : {"<script>alert(1)</script>", "<img src=\"x\">", "<p onclick=\"x()\">", "<a href=\"javascript:x\">",
                          "<svg><foreignObject></foreignObject></svg>", "<path fill=\"url(http://evil/x)\"/>",
                          "<p class=x onclick=y>", "<a href='https://evil'>"})
    EXPECT_THROW(require_inert_html(bad, page), InvariantFailed) << bad;
}

}  // namespace
}  // namespace scalelab::fuzz
