#include "scalelab/report/full_run_comparison.hpp"

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>

#include "scalelab/core/error.hpp"
#include "scalelab/core/quote.hpp"
#include "scalelab/report/claim_catalogue.hpp"

namespace scalelab::report {
namespace {

namespace fs = std::filesystem;

// The date and commit of "Published 2026-12-04 from commit f0c765f, ..." (scripts/publish-report.sh
// writes it); empty strings when DIR has no PUBLISHED.md or the line is not there. Only a regular
// file is read, and only its first 4 KiB: the line is the file's third.
std::pair<std::string, std::string> published_date_and_commit(const fs::path& dir) {
  const fs::path path = dir / "PUBLISHED.md";
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return {};
  std::ifstream in(path, std::ios::binary);
  std::string head(4096, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  static const std::regex line(R"(Published ([0-9]{4}-[0-9]{2}-[0-9]{2}) from commit ([0-9a-f]{4,40})\b)");
  std::smatch m;
  if (!std::regex_search(head, m, line)) return {};
  return {m[1], m[2]};
}

// "0.1.0" of "0.1.0+e56fc3a1 built by g++ ...".
std::string short_version(const std::string& version) {
  return version.substr(0, version.find_first_of("+ "));
}

}  // namespace

CompareWith parse_compare_with(const std::string& value) {
  SL_CHECK(!value.empty(), "--compare-with \"\": names no directory (give a directory holding a full-mode "
                           "ledger.json, e.g. docs/report, or none)");
  if (value == "none") return {CompareWith::none, ""};
  return {CompareWith::directory, value};
}

std::string published_report_dir() { return SCALELAB_PUBLISHED_REPORT_DIR; }

FullRun read_full_run(const std::string& dir) {
  Ledger ledger;
  try {
    ledger = read_ledger_summary(dir);
  } catch (const Error& e) {
    throw_error("the full run to compare with: ", e.what());
  }
  SL_CHECK(ledger.mode == "full", "the full run to compare with: ",
           scalelab::quote_for_message((fs::path(dir) / "ledger.json").string()), ": mode = ", scalelab::quote_for_message(ledger.mode),
           ", not a full-mode ledger (a quick ledger is compared with a full one: `scalelab check` without "
           "--quick, or docs/report)");
  FullRun run;
  run.dir = dir;
  run.cpu = ledger.cpu;
  run.version = short_version(ledger.version);
  run.entries = std::move(ledger.entries);
  std::tie(run.date, run.commit) = published_date_and_commit(dir);
  return run;
}

std::optional<FullRun> full_run_to_compare(const CompareWith& with, const std::string& ledger_mode) {
  switch (with.kind) {
    case CompareWith::none:
      return std::nullopt;
    case CompareWith::directory: {
      FullRun run = read_full_run(with.dir);
      if (ledger_mode != "quick") return std::nullopt;
      return run;
    }
    case CompareWith::published: {
      if (ledger_mode != "quick") return std::nullopt;
      std::error_code ec;
      const std::string dir = published_report_dir();
      if (fs::symlink_status(fs::path(dir) / "ledger.json", ec).type() == fs::file_type::not_found) return std::nullopt;
      return read_full_run(dir);
    }
  }
  return std::nullopt;
}

std::vector<Block> comparison_blocks(const Ledger& quick, const FullRun& full) {
  std::map<std::string, const LedgerEntry*> in_full;
  for (const LedgerEntry& e : full.entries) in_full[e.id] = &e;
  Table differ{{"claim", "quick verdict", "full verdict"}, {false, false, false}, {}};
  int compared = 0;
  std::string missing;
  for (const ClaimRecord* c : claims_in_order(quick)) {
    const auto it = in_full.find(c->id);
    if (it == in_full.end()) {
      missing += (missing.empty() ? "" : ", ") + c->id;
      continue;
    }
    ++compared;
    // The verdict itself: a "holds only if" names the quick grid's arms, which the full grid's differ from.
    if (c->verdict != it->second->verdict)
      differ.rows.push_back({{link(c->id, claim_anchor(c->id))}, {txt(verdict_text(c->verdict))},
                             {strong(verdict_text(it->second->verdict))}});
  }

  std::vector<Block> out;
  out.push_back(Heading{2, "compared", {txt("Compared with the full run")}});
  Inline about{txt("Against the full run in "), code(full.dir)};
  std::string when;
  if (!full.date.empty()) when += "published " + full.date;
  if (!full.commit.empty()) when += (when.empty() ? "" : " ") + std::string("from commit ") + full.commit;
  if (!full.cpu.empty()) when += (when.empty() ? "" : ", ") + std::string("on ") + full.cpu;
  if (!full.version.empty()) when += (when.empty() ? "" : ", ") + std::string("scalelab ") + full.version;
  if (full.date.empty()) when += (when.empty() ? "" : "; ") + std::string("its date and commit are not recorded (no PUBLISHED.md)");
  about.push_back(txt(" (" + when + "): "));
  if (compared == 0) {
    about.push_back(txt("it has none of this ledger's claims."));
  } else if (differ.rows.empty()) {
    about.push_back(strong(compared == 1 ? "the one claim compared agrees"
                                         : "all " + std::to_string(compared) + " claims agree"));
    about.push_back(txt(" with this quick ledger."));
  } else {
    about.push_back(strong(std::to_string(differ.rows.size()) + " of " + std::to_string(compared) + " claims"));
    about.push_back(txt(differ.rows.size() == 1 ? " got another verdict there:" : " got other verdicts there:"));
  }
  out.push_back(Paragraph{about, "note"});
  if (!differ.rows.empty()) out.push_back(std::move(differ));
  if (!missing.empty()) out.push_back(Paragraph{{txt("Not in the full run: " + missing + ".")}, ""});
  return out;
}

}  // namespace scalelab::report
