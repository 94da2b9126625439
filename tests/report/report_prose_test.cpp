// The report's prose names no identifier of the config schema: outside code spans and the
// per-claim config dumps, the rendered text of the published full ledger (docs/report) and of the
// test fixture reads "√d", "N(0, 1/d)", "1/√d_k", never sqrt_d, normal_inv_d or inv_sqrt_dk.
//
// The identifiers are collected from the ledgers' own resolved configs (every key and string
// value with an underscore and a stem longer than one letter), independently of the report's
// rewriting table.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <set>

#include "scalelab/report/ledger_files.hpp"
#include "scalelab/report/write_report.hpp"

namespace scalelab::report {
namespace {

namespace fs = std::filesystem;

void collect(const Json& j, std::set<std::string>& out) {
  auto take = [&](const std::string& s) {
    const size_t us = s.find('_');
    if (us != std::string::npos && us > 1 && s.find(' ') == std::string::npos) out.insert(s);
  };
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      take(it.key());
      collect(it.value(), out);
    }
  } else if (j.is_array()) {
    for (const Json& v : j) collect(v, out);
  } else if (j.is_string()) {
    take(j.get<std::string>());
  }
}

// The visible prose of report.html, folded evidence included: without style, code and pre (the
// config dumps), SVG and tags.
std::string prose_of(std::string html) {
  for (const char* element : {"style", "code", "pre", "svg"}) {
    const std::regex block("<" + std::string(element) + "[\\s\\S]*?</" + element + ">");
    html = std::regex_replace(html, block, " ");
  }
  return std::regex_replace(html, std::regex("<[^>]*>"), " ");
}

void expect_plain_prose(const std::string& dir, size_t at_least) {
  SCOPED_TRACE(dir);
  const Ledger ledger = read_ledger(dir);
  std::set<std::string> identifiers;
  for (const auto& [id, claim] : ledger.claims)
    for (const Arm& a : claim.arms) collect(a.config, identifiers);
  ASSERT_GE(identifiers.size(), at_least) << "no config identifiers found: the test would check nothing";
  const std::string text = prose_of(render_report(ledger, ReportOptions{}, false).html);
  for (const std::string& name : identifiers) {
    const std::regex word("(^|[^A-Za-z0-9_])" + name + "([^A-Za-z0-9_]|$)");
    std::smatch m;
    EXPECT_FALSE(std::regex_search(text, m, word))
        << "\"" << name << "\" in the report's prose: ..." << text.substr(m.position(0) > 80 ? m.position(0) - 80 : 0, 200) << "...";
  }
}

TEST(ReportProse, ThePublishedReportNamesNoConfigIdentifier) {
  const fs::path published = fs::path(SCALELAB_TEST_SOURCE_DIR) / "docs/report";
  ASSERT_TRUE(fs::exists(published / "ledger.json")) << published;
  expect_plain_prose(published.string(), 20);
}

TEST(ReportProse, TheFixtureReportNamesNoConfigIdentifier) {
  expect_plain_prose((fs::path(SCALELAB_TEST_SOURCE_DIR) / "tests/report/fixtures/ledger").string(), 1);
}

}  // namespace
}  // namespace scalelab::report
