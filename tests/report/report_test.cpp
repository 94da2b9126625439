// scalelab report on a fixture ledger (tests/report/fixtures/ledger: four claims with lines, bars
// and heatmap plots and a "not testable" claim).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "scalelab/core/error.hpp"
#include "scalelab/report/gnuplot.hpp"
#include "scalelab/report/svg_inline.hpp"
#include "scalelab/report/text.hpp"
#include "scalelab/report/write_report.hpp"

namespace scalelab::report {
namespace {

namespace fs = std::filesystem;

fs::path fixture_ledger() {
  if (const char* source = std::getenv("SCALELAB_SOURCE"))
    return fs::path(source) / "tests/report/fixtures/ledger";
  return fs::path(SCALELAB_TEST_SOURCE_DIR) / "tests/report/fixtures/ledger";  // see data/fixture_path.hpp
}

fs::path scratch_root() {
  return fs::temp_directory_path() / ("scalelab-report-test-" + std::to_string(::getpid()));
}

// Removes this process's scratch directories when the tests end.
class ScratchCleanup : public ::testing::Environment {
 public:
  void TearDown() override { fs::remove_all(scratch_root()); }
};
const auto* const cleanup = ::testing::AddGlobalTestEnvironment(new ScratchCleanup);

// A private copy of the fixture ledger for one test.
fs::path fresh_ledger(const std::string& name) {
  const fs::path dir = scratch_root() / name;
  fs::remove_all(dir);
  fs::create_directories(dir.parent_path());
  fs::copy(fixture_ledger(), dir, fs::copy_options::recursive);
  return dir;
}

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

Json read_json(const fs::path& p) { return Json::parse(read(p)); }
void write_json(const fs::path& p, const Json& j) { std::ofstream(p) << j.dump(2); }

// The page from its start to the summary table: the title, the questions and their answers.
std::string opening_of(const std::string& html) {
  const size_t end = html.find("id=\"summary\"");
  EXPECT_NE(end, std::string::npos);
  return html.substr(0, end);
}

ReportOptions no_gnuplot() {
  ReportOptions o;
  o.gnuplot = "/nonexistent/gnuplot-for-scalelab-test";
  return o;
}

TEST(Report, EscapesTextFromTheJson) {
  const fs::path dir = fresh_ledger("escape");
  write_report(dir.string(), no_gnuplot());
  const std::string html = read(dir / "report.html");
  // E4's experiment text holds "<b>not bold</b> & friends".
  EXPECT_NE(html.find("&lt;b&gt;not bold&lt;/b&gt; &amp; friends"), std::string::npos);
  EXPECT_EQ(html.find("<b>not bold</b>"), std::string::npos);
  const std::string md = read(dir / "report.md");
  EXPECT_NE(md.find("&#60;b&#62;not bold&#60;/b&#62; &#38; friends"), std::string::npos);
}

TEST(Report, EveryClaimGetsASectionInBothFiles) {
  const fs::path dir = fresh_ledger("sections");
  const ReportResult r = write_report(dir.string(), no_gnuplot());
  EXPECT_EQ(r.claims, 4);
  const std::string html = read(dir / "report.html");
  const std::string md = read(dir / "report.md");
  // Named: a range-for over a member of a temporary reads freed memory (found by ASan).
  const Json ledger = read_json(dir / "ledger.json");
  for (const Json& entry : ledger.at("claims")) {
    const std::string id = entry.at("id").get<std::string>();
    EXPECT_NE(html.find("<h2 id=\"claim-" + id + "\">"), std::string::npos) << id;
    EXPECT_NE(html.find("href=\"#claim-" + id + "\""), std::string::npos) << id;  // summary link
    EXPECT_NE(md.find("<a id=\"claim-" + id + "\"></a>"), std::string::npos) << id;
  }
  // Arms with their resolved configs, collapsed.
  EXPECT_NE(html.find("<details><summary>Resolved config of arm &quot;N(0,1/d) x sqrt(d)&quot;"), std::string::npos);
  // The not-testable claim gives its reason.
  EXPECT_NE(html.find("names no implementation"), std::string::npos);
}

TEST(Report, OpeningQuotesTheNumbersAndVerdictsOfTheJson) {
  const fs::path dir = fresh_ledger("opening");
  write_report(dir.string(), no_gnuplot());
  const std::string opening = opening_of(read(dir / "report.html"));
  for (const char* id : {"E4", "A4", "E6"}) {
    const Json claim = read_json(dir / "claims" / (std::string(id) + ".json"));
    EXPECT_NE(opening.find(escape_html(claim.at("key_number").at("text").get<std::string>())), std::string::npos) << id;
    EXPECT_NE(opening.find(escape_html(claim.at("key_number").at("label").get<std::string>())), std::string::npos) << id;
  }
  EXPECT_NE(opening.find("<strong>holds only if</strong> the table is initialised with std 1/sqrt(d_model)"),
            std::string::npos);
  EXPECT_NE(opening.find("<strong>does not hold</strong> (embedding overflows at d_model 4096: 0"), std::string::npos);
  // Claims absent from the ledger are said to be so.
  EXPECT_NE(opening.find("E11 · The claim that with RoPE"), std::string::npos);
  EXPECT_NE(opening.find("<em>was not run</em>"), std::string::npos);
}

TEST(Report, ChangedNumbersAndVerdictsShowAfterRegenerating) {
  const fs::path dir = fresh_ledger("regenerate");
  write_report(dir.string(), no_gnuplot());
  EXPECT_NE(opening_of(read(dir / "report.html")).find("d 512: 2.05"), std::string::npos);

  Json e4 = read_json(dir / "claims/E4.json");
  e4["key_number"]["value"] = 3.875;
  e4["key_number"]["text"] = "3.875";
  write_json(dir / "claims/E4.json", e4);
  Json a4 = read_json(dir / "claims/A4.json");
  a4["verdict"] = "does not hold";
  write_json(dir / "claims/A4.json", a4);
  write_report(dir.string(), no_gnuplot());

  const std::string opening = opening_of(read(dir / "report.html"));
  EXPECT_NE(opening.find("d 512: 3.875"), std::string::npos);
  EXPECT_EQ(opening.find("d 512: 2.05"), std::string::npos);
  EXPECT_NE(opening.find("training does not converge <strong>does not hold</strong>"), std::string::npos);
  EXPECT_EQ(opening.find("training does not converge <strong>holds</strong>"), std::string::npos);
  EXPECT_NE(read(dir / "report.md").find("d 512: 3.875"), std::string::npos);
}

TEST(Report, WithoutGnuplotThePageSaysSoAndKeepsItsTables) {
  const fs::path dir = fresh_ledger("no-gnuplot");
  const ReportResult r = write_report(dir.string(), no_gnuplot());
  EXPECT_FALSE(r.gnuplot_found);
  EXPECT_EQ(r.plots_drawn, 0);
  EXPECT_EQ(r.plots_failed, 3);
  const std::string html = read(dir / "report.html");
  EXPECT_NE(html.find("No plots: "), std::string::npos);
  EXPECT_NE(html.find("/nonexistent/gnuplot-for-scalelab-test"), std::string::npos);
  EXPECT_NE(html.find("Plot E4-ratio was not drawn"), std::string::npos);
  EXPECT_EQ(html.find("<svg"), std::string::npos);
  // The measurements table is still there: E4's first median and its range.
  EXPECT_NE(html.find("<td class=\"num\">2.01</td><td class=\"num\">1.98 – 2.04</td>"), std::string::npos);
}

TEST(Report, PlotsAreInlinedWithUniqueIdsAndWrittenBesideTheMarkdown) {
  if (!gnuplot_works("gnuplot")) GTEST_SKIP() << "gnuplot is not installed";
  const fs::path dir = fresh_ledger("plots");
  const ReportResult r = write_report(dir.string(), ReportOptions{});
  EXPECT_EQ(r.plots_drawn, 3);
  EXPECT_EQ(r.plots_failed, 0);
  const std::string html = read(dir / "report.html");
  size_t svgs = 0;
  for (size_t at = html.find("<svg"); at != std::string::npos; at = html.find("<svg", at + 1)) ++svgs;
  EXPECT_EQ(svgs, 4u);  // and E6's main plot inlined again, answering the FP16 question
  EXPECT_EQ(html.find("<?xml"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  std::set<std::string> ids;
  const std::regex id_attr(R"re(\sid=["']([^"']+)["'])re");
  for (auto it = std::sregex_iterator(html.begin(), html.end(), id_attr); it != std::sregex_iterator(); ++it)
    EXPECT_TRUE(ids.insert((*it)[1]).second) << "duplicate id " << (*it)[1];
  // Every in-page reference points at an id that exists; nothing points outside the page.
  const std::regex ref(R"re((?:href|src)=["']([^"']*)["'])re");
  for (auto it = std::sregex_iterator(html.begin(), html.end(), ref); it != std::sregex_iterator(); ++it) {
    const std::string target = (*it)[1];
    ASSERT_FALSE(target.empty());
    ASSERT_EQ(target[0], '#') << target;
    EXPECT_TRUE(ids.count(target.substr(1))) << "dangling reference " << target;
  }
  for (const char* plot : {"E4-ratio", "A4-saturation", "E6-overflow-map"}) {
    EXPECT_TRUE(fs::exists(dir / "plots" / (std::string(plot) + ".svg"))) << plot;
    EXPECT_NE(read(dir / "report.md").find(std::string("](plots/") + plot + ".svg)"), std::string::npos) << plot;
  }
}

TEST(Report, ClaimMissingFromTheLedgerIsSaidNotRun) {
  const fs::path dir = fresh_ledger("missing-claim");
  Json ledger = read_json(dir / "ledger.json");
  Json kept = Json::array();
  for (const Json& e : ledger["claims"])
    if (e["id"] != "A4") kept.push_back(e);
  ledger["claims"] = kept;
  write_json(dir / "ledger.json", ledger);
  fs::remove(dir / "claims/A4.json");
  write_report(dir.string(), no_gnuplot());
  const std::string html = read(dir / "report.html");
  EXPECT_NE(opening_of(html).find("A4 · The claim that without a scale softmax saturates"), std::string::npos);
  EXPECT_EQ(html.find("id=\"claim-A4\""), std::string::npos);
  EXPECT_NE(html.find("scalelab check --only "), std::string::npos);
}

TEST(Report, ErrorsNameTheFileAndTheValue) {
  EXPECT_THROW(
      {
        try {
          write_report("/nonexistent/scalelab-report-dir", no_gnuplot());
        } catch (const Error& e) {
          EXPECT_NE(std::string(e.what()).find("/nonexistent/scalelab-report-dir"), std::string::npos);
          throw;
        }
      },
      Error);
  const fs::path empty = fresh_ledger("no-ledger-json");
  fs::remove(empty / "ledger.json");
  try {
    write_report(empty.string(), no_gnuplot());
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no ledger.json"), std::string::npos) << e.what();
  }
  const fs::path bad = fresh_ledger("bad-verdict");
  Json e6 = read_json(bad / "claims/E6.json");
  e6["verdict"] = "sort of";
  write_json(bad / "claims/E6.json", e6);
  try {
    write_report(bad.string(), no_gnuplot());
    FAIL() << "no error";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("claims/E6.json"), std::string::npos) << what;
    EXPECT_NE(what.find("'sort of'"), std::string::npos) << what;
  }
  EXPECT_FALSE(fs::exists(bad / "report.html"));
}

// The summary's rows, each a list of its cells' HTML.
std::vector<std::vector<std::string>> summary_rows(const std::string& html, std::vector<std::string>& header) {
  const size_t at = html.find("<div class=\"scroll\" id=\"summary-table\"><table>");
  EXPECT_NE(at, std::string::npos);
  if (at == std::string::npos) return {};
  const std::string table = html.substr(at, html.find("</table>", at) - at);
  const std::regex th("<th[^>]*>([^<]*)</th>"), tr("<tr>(.*?)</tr>"), td("<td[^>]*>(.*?)</td>");
  header.clear();
  for (auto it = std::sregex_iterator(table.begin(), table.end(), th); it != std::sregex_iterator(); ++it)
    header.push_back((*it)[1]);
  std::vector<std::vector<std::string>> rows;
  const std::string body = table.substr(table.find("<tbody>"));
  for (auto r = std::sregex_iterator(body.begin(), body.end(), tr); r != std::sregex_iterator(); ++r) {
    const std::string row = (*r)[1];
    rows.emplace_back();
    for (auto c = std::sregex_iterator(row.begin(), row.end(), td); c != std::sregex_iterator(); ++c)
      rows.back().push_back((*c)[1]);
  }
  return rows;
}

TEST(Report, SummaryTableShowsHowSureInColumnsBesideTheVerdict) {
  const fs::path dir = fresh_ledger("how-sure-columns");
  // A4's criterion threshold under the name the ledger writes, and one failed seed in E4's key
  // measurement (its median stays 2.05: the failed seed ranks worst).
  Json a4 = read_json(dir / "claims/A4.json");
  a4["thresholds"] = {{"saturated_share", 0.5}};
  write_json(dir / "claims/A4.json", a4);
  Json e4 = read_json(dir / "claims/E4.json");
  for (Json& m : e4["measurements"])
    if (m["x"] == 1024 && m["arm"] == "N(0,1/d) x sqrt(d)") {
      m["values"][2] = nullptr;
      m["failed"] = 1;
      m["max"] = nullptr;
    }
  write_json(dir / "claims/E4.json", e4);
  write_report(dir.string(), no_gnuplot());
  const std::string html = read(dir / "report.html");
  std::vector<std::string> header;
  const auto rows = summary_rows(html, header);
  EXPECT_EQ(header, (std::vector<std::string>{"claim", "statement", "verdict", "how sure", "seeds", "failed seeds",
                                               "paired spread", "margin to threshold", "key number"}));
  ASSERT_EQ(rows.size(), 4u);
  std::map<std::string, std::vector<std::string>> by_id;
  for (const auto& row : rows) {
    ASSERT_EQ(row.size(), header.size()) << row.front();
    by_id[row.front().substr(row.front().find("\">") + 2, row.front().find("</a>") - row.front().find("\">") - 2)] = row;
  }
  // A4: 3 seeds, none failed; its key number 0.91 is the median of "none, d_k 256" (0.90-0.93);
  // 0.91 against the threshold 0.5 is 82 % above it.
  const auto& a4_row = by_id.at("A4");
  EXPECT_EQ(a4_row[2], "<strong>holds</strong>");  // the verdict alone: the badge has its column
  EXPECT_EQ(a4_row[3], "<span class=\"badge badge-provisional\">provisional</span>");
  EXPECT_EQ(a4_row[4], "3");
  EXPECT_EQ(a4_row[5], "0");
  EXPECT_EQ(a4_row[6], "0.03");
  EXPECT_EQ(a4_row[7], "82 % above 0.5");
  // E4: a failed seed is counted and leaves the spread unbounded, so none is shown; its
  // thresholds are not the one its criterion applies to the key number.
  const auto& e4_row = by_id.at("E4");
  EXPECT_EQ(e4_row[2], "<strong>holds only if</strong> the table is initialised with std 1/sqrt(d_model)");
  EXPECT_EQ(e4_row[5], "1");
  EXPECT_EQ(e4_row[6], "–");
  EXPECT_EQ(e4_row[7], "–");
  // A12 has no arms and no key number: every figure is "–".
  const auto& a12_row = by_id.at("A12");
  for (size_t c = 4; c <= 7; ++c) EXPECT_EQ(a12_row[c], "–") << header[c];
  // Numbers right-aligned; the table's box is the one the page's narrow-screen rules address.
  EXPECT_NE(html.find("<td class=\"num\">82 % above 0.5</td>"), std::string::npos);
  EXPECT_NE(html.find("#summary-table td:nth-child(3) { min-width:"), std::string::npos);
  // The Markdown table has the same columns.
  const std::string md = read(dir / "report.md");
  EXPECT_NE(md.find("| claim | statement | verdict | how sure | seeds | failed seeds | paired spread | margin to threshold | key number |"),
            std::string::npos);
  EXPECT_NE(md.find("| **&#91;provisional&#93;** | 3 | 0 | 0.03 | 82 % above 0.5 |"), std::string::npos);
}

TEST(ReportText, FormatsNumbersCompactly) {
  EXPECT_EQ(format_number(0.91), "0.91");
  EXPECT_EQ(format_number(2.0), "2");
  EXPECT_EQ(format_number(12345.6), "12346");
  EXPECT_EQ(format_number(2.5e-5), "2.5e-5");
  EXPECT_EQ(format_number(65504.0 * 100), "6.55e6");
  EXPECT_EQ(format_number(1.5e9), "1.5e9");
  EXPECT_EQ(format_number(std::nan("")), "n/a");
}

TEST(ReportSvg, InliningPrefixesIdsAndReferencesAndDropsTheProlog) {
  const std::string svg =
      "<?xml version=\"1.0\"?>\n<!DOCTYPE svg>\n<svg viewBox=\"0 0 10 10\" "
      "xmlns=\"http://www.w3.org/2000/svg\" xmlns:xlink=\"http://www.w3.org/1999/xlink\">\n"
      "<title>Gnuplot</title><desc>x</desc><defs><path id='gpPt0' d='M0,0'/></defs>"
      "<use xlink:href='#gpPt0'/><g id=\"gnuplot_plot_1\" filter=\"url(#textbox)\"><script>x()</script></g></svg>\n";
  const std::string out = inline_svg(svg, "p3-", "A <title>");
  EXPECT_EQ(out.rfind("<svg role=\"img\"", 0), 0u) << out;
  EXPECT_EQ(out.find("<?xml"), std::string::npos);
  EXPECT_EQ(out.find("DOCTYPE"), std::string::npos);
  EXPECT_EQ(out.find("<script"), std::string::npos);
  // Every tag is rebuilt from its parsed attributes, each value in double quotes.
  EXPECT_NE(out.find("id=\"p3-gpPt0\""), std::string::npos) << out;
  EXPECT_NE(out.find("xlink:href=\"#p3-gpPt0\""), std::string::npos) << out;
  EXPECT_NE(out.find("id=\"p3-gnuplot_plot_1\""), std::string::npos);
  EXPECT_NE(out.find("url(#p3-textbox)"), std::string::npos);
  EXPECT_NE(out.find("<title>A &lt;title&gt;</title>"), std::string::npos);
  EXPECT_EQ(out.find("Gnuplot"), std::string::npos);
  EXPECT_EQ(out.substr(out.size() - 6), "</svg>");
}

}  // namespace
}  // namespace scalelab::report

namespace scalelab::report {
namespace {

PlotSpec lines_spec() {
  PlotSpec p;
  p.id = "t-lines";
  p.kind = "lines";
  p.x_label = "d_k \"quoted\"";
  p.y_label = "share";
  p.log_x = true;
  p.series = {{"no scale", {{16, 0.2, 0.1, 0.3}, {32, 0.3, 0.2, 0.4}, {64, 0.5, 0.4, 0.6}}}};
  return p;
}

TEST(ReportGnuplot, ScriptsLabelLogAxesEscapeStringsAndDrawBands) {
  const std::string s = gnuplot_script(lines_spec(), "/data", "/out/plot.svg");
  EXPECT_NE(s.find("set terminal svg"), std::string::npos);
  EXPECT_NE(s.find("noenhanced"), std::string::npos);  // "d_k" stays d_k, not d subscript k
  EXPECT_NE(s.find("set xlabel 'd_k \"quoted\"'"), std::string::npos) << s;
  EXPECT_NE(s.find("set logscale x"), std::string::npos);
  EXPECT_NE(s.find("set xtics ('16' 16, '32' 32, '64' 64)"), std::string::npos) << s;
  EXPECT_NE(s.find("with filledcurves"), std::string::npos);  // the band
  EXPECT_NE(s.find("title 'no scale'"), std::string::npos);

  PlotSpec bars;
  bars.id = "t-bars";
  bars.kind = "bars";
  bars.cols = {"normal × 1", "normal × sqrt_d", "normal × d", "normal_inv_d × 1", "normal_inv_d × sqrt_d",
               "xavier_uniform × d"};
  bars.series = {{"median", {{0, 0.5}, {5, 0.1}}}};
  const std::string b = gnuplot_script(bars, "/data", "/out/bars.svg");
  EXPECT_NE(b.find("set style histogram clustered"), std::string::npos);
  EXPECT_NE(b.find("rotate by 35 right"), std::string::npos);  // long labels slant
  EXPECT_NE(b.find("'normal_inv_d × 1' 3"), std::string::npos) << b;

  PlotSpec heat;
  heat.id = "t-heat";
  heat.kind = "heatmap";
  heat.rows = {"a", "b"};
  heat.cols = {"x", "y"};
  heat.matrix = {{1, 2}, {3, 4}};
  const std::string h = gnuplot_script(heat, "/data", "/out/heat.svg");
  EXPECT_NE(h.find("with image pixels"), std::string::npos);  // rectangles, not an embedded PNG
  EXPECT_NE(h.find("with labels"), std::string::npos);
}

TEST(ReportGnuplot, APlotWithoutAnyValueIsReportedNotDrawn) {
  PlotSpec p = lines_spec();
  for (auto& pt : p.series[0].points) pt = {pt[0], std::nan("")};
  const PlotResult r = draw_plot(p, "gnuplot");
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.problem.find("no value to plot"), std::string::npos) << r.problem;
  const PlotResult missing = draw_plot(lines_spec(), "/nonexistent/gnuplot");
  EXPECT_FALSE(missing.ok);
  EXPECT_NE(missing.problem.find("cannot run gnuplot program '/nonexistent/gnuplot'"), std::string::npos)
      << missing.problem;
}

}  // namespace
}  // namespace scalelab::report
