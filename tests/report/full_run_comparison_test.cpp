// A quick ledger's report against a full run (report/full_run_comparison.hpp): the claims whose
// verdicts differ are listed, exactly those; a directory that holds no full-mode ledger is an
// error before anything is written; a full-mode ledger's report has no such section.
#include <gtest/gtest.h>

#include <regex>
#include <set>

#include "scalelab/core/error.hpp"
#include "scalelab/report/full_run_comparison.hpp"
#include "scalelab/report/write_report.hpp"
#include "support/report_fixture.hpp"

namespace scalelab::report {
namespace {

namespace fs = std::filesystem;
using scalelab::testing::fresh_fixture;
using scalelab::testing::read_json;
using scalelab::testing::read_text;
using scalelab::testing::write_json;

ReportOptions compared_with(const fs::path& dir) {
  ReportOptions o;
  o.gnuplot = "/nonexistent/gnuplot-for-scalelab-test";
  o.compare_with = parse_compare_with(dir.string());
  return o;
}

// The section's text, from its heading to the next h2 ("" when there is none).
std::string compared_section(const std::string& html) {
  const size_t at = html.find("<h2 id=\"compared\">");
  if (at == std::string::npos) return "";
  return html.substr(at, html.find("<h2", at + 1) - at);
}

// The claim IDs in the section's table rows.
std::set<std::string> listed_claims(const std::string& section) {
  std::set<std::string> ids;
  const std::regex row(R"re(<tr><td><a href="#claim-([A-Za-z0-9_-]+)">)re");
  for (auto it = std::sregex_iterator(section.begin(), section.end(), row); it != std::sregex_iterator(); ++it)
    ids.insert((*it)[1]);
  return ids;
}

// The fixture quick ledger (E4 holds only if, A4 holds, E6 does not hold, A12 not testable)
// against the full fixture (E4 holds only if, A4 does not hold, E6 does not hold, A12 holds):
// A4 and A12 differ. E4's conditions differ too, but only the verdict is compared.
TEST(FullRunComparison, AQuickLedgerListsExactlyTheClaimsWhoseVerdictDiffers) {
  const fs::path quick = fresh_fixture("ledger", "two-differ");
  const fs::path full = fresh_fixture("full-ledger", "two-differ-full");
  write_report(quick.string(), compared_with(full));
  const std::string html = read_text(quick / "report.html");
  const std::string section = compared_section(html);
  ASSERT_FALSE(section.empty()) << "no comparison section";
  EXPECT_EQ(listed_claims(section), (std::set<std::string>{"A4", "A12"}));
  // Each row: the quick verdict, then the full one.
  EXPECT_NE(section.find("<a href=\"#claim-A4\">A4</a></td><td>holds</td><td><strong>does not hold</strong>"),
            std::string::npos) << section;
  EXPECT_NE(section.find("<a href=\"#claim-A12\">A12</a></td><td>not testable here</td><td><strong>holds</strong>"),
            std::string::npos) << section;
  EXPECT_NE(section.find("2 of 4 claims"), std::string::npos) << section;
  // The full run's date and commit (PUBLISHED.md), CPU and version (ledger.json).
  for (const char* about : {"2026-11-30", "abc1234", "fixture full-run CPU (AVX-512)", "scalelab 0.1.0)"})
    EXPECT_NE(section.find(about), std::string::npos) << about << " in " << section;
  // It opens the report: before the questions, linked from the contents line.
  EXPECT_LT(html.find("<h2 id=\"compared\">"), html.find("id=\"q-embedding\""));
  EXPECT_NE(html.find("<a href=\"#compared\">"), std::string::npos);
  // The Markdown has the same rows.
  const std::string md = read_text(quick / "report.md");
  EXPECT_NE(md.find("## Compared with the full run"), std::string::npos);
  EXPECT_NE(md.find("| [A4](#claim-A4) | holds | **does not hold** |"), std::string::npos) << md;
  EXPECT_NE(md.find("| [A12](#claim-A12) | not testable here | **holds** |"), std::string::npos);
  EXPECT_EQ(md.find("| [E4](#claim-E4) |"), md.rfind("| [E4](#claim-E4) |"));  // only the summary's row
}

TEST(FullRunComparison, AgreeingVerdictsGiveOneLineAndMissingClaimsAreNamed) {
  const fs::path quick = fresh_fixture("ledger", "agree");
  const fs::path full = fresh_fixture("full-ledger", "agree-full");
  Json ledger = read_json(full / "ledger.json");
  Json kept = Json::array();
  for (Json e : ledger["claims"]) {
    if (e["id"] == "A4") e["verdict"] = "holds";
    if (e["id"] == "A12") continue;  // not in the full run
    kept.push_back(e);
  }
  ledger["claims"] = kept;
  write_json(full / "ledger.json", ledger);
  fs::remove(full / "PUBLISHED.md");
  write_report(quick.string(), compared_with(full));
  const std::string section = compared_section(read_text(quick / "report.html"));
  EXPECT_TRUE(listed_claims(section).empty()) << section;
  EXPECT_NE(section.find("<strong>all 3 claims agree</strong> with this quick ledger."), std::string::npos) << section;
  EXPECT_NE(section.find("Not in the full run: A12."), std::string::npos) << section;
  EXPECT_NE(section.find("date and commit are not recorded"), std::string::npos) << section;
}

TEST(FullRunComparison, AFullModeLedgerOrNoneGetsNoSection) {
  const fs::path full_as_reported = fresh_fixture("ledger", "full-mode");
  Json ledger = read_json(full_as_reported / "ledger.json");
  ledger["mode"] = "full";
  write_json(full_as_reported / "ledger.json", ledger);
  write_report(full_as_reported.string(), compared_with(fresh_fixture("full-ledger", "full-mode-full")));
  std::string html = read_text(full_as_reported / "report.html");
  EXPECT_EQ(html.find("Compared with the full run"), std::string::npos);
  EXPECT_EQ(html.find("href=\"#compared\""), std::string::npos);

  const fs::path quick = fresh_fixture("ledger", "none");
  ReportOptions o = compared_with(fresh_fixture("full-ledger", "none-full"));
  o.compare_with = parse_compare_with("none");
  write_report(quick.string(), o);
  EXPECT_EQ(read_text(quick / "report.html").find("Compared with the full run"), std::string::npos);
}

// Each bad DIR: one message naming it and the problem; no report written.
TEST(FullRunComparison, ADirectoryWithoutAFullLedgerIsAnErrorAndNothingIsWritten) {
  const fs::path no_ledger = fresh_fixture("full-ledger", "err-no-ledger");
  fs::remove(no_ledger / "ledger.json");
  const fs::path not_json = fresh_fixture("full-ledger", "err-not-json");
  std::ofstream(not_json / "ledger.json") << "{\"schema\": 1, \"mode\": \"full\", ";
  const fs::path quick_mode = fresh_fixture("ledger", "err-quick-mode");  // a quick ledger is no full run
  const struct {
    fs::path dir;
    const char* problem;
  } cases[] = {{no_ledger, ": no ledger.json"},
               {not_json, "ledger.json': not valid JSON"},
               {quick_mode, ": mode = 'quick', not a full-mode ledger"},
               {"/nonexistent/scalelab-full-run", ": no such directory"}};
  for (const auto& c : cases) {
    const fs::path quick = fresh_fixture("ledger", "err-report");
    try {
      write_report(quick.string(), compared_with(c.dir));
      ADD_FAILURE() << "no error for " << c.dir;
    } catch (const Error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("the full run to compare with: "), std::string::npos) << what;
      EXPECT_NE(what.find(c.dir.string()), std::string::npos) << what;
      EXPECT_NE(what.find(c.problem), std::string::npos) << what;
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    }
    EXPECT_FALSE(fs::exists(quick / "report.html")) << c.dir;
    EXPECT_FALSE(fs::exists(quick / "report.md")) << c.dir;
  }
  // Checked whatever the ledger's mode: a wrong --compare-with is not ignored silently.
  EXPECT_THROW(full_run_to_compare(parse_compare_with(no_ledger.string()), "full"), Error);
  EXPECT_THROW(parse_compare_with(""), Error);
}

TEST(FullRunComparison, ThePublishedLedgerIsTheDefaultForQuickLedgersOnly) {
  const fs::path published = published_report_dir();
  ASSERT_TRUE(published.is_absolute()) << published;
  const CompareWith with{CompareWith::published, ""};
  EXPECT_FALSE(full_run_to_compare(with, "full"));
  const std::optional<FullRun> run = full_run_to_compare(with, "quick");
  // This source tree publishes docs/report/; a build of a tree without it compares with nothing.
  EXPECT_EQ(run.has_value(), fs::exists(published / "ledger.json"));
  if (run) {
    EXPECT_EQ(run->dir, published.string());
    EXPECT_FALSE(run->entries.empty());
    EXPECT_FALSE(run->date.empty());  // docs/report/PUBLISHED.md
    EXPECT_FALSE(run->commit.empty());
  }
}

}  // namespace
}  // namespace scalelab::report
