// scalelab check: run the claims ledger (docs/ledger.md) and write its report (scalelab report).
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <iostream>

#include "commands.hpp"
#include "program_option.hpp"
#include "scalelab/ledger/check.hpp"
#include "scalelab/report/gnuplot.hpp"
#include "scalelab/ledger/dry_run.hpp"
#include "scalelab/ledger/user_claims.hpp"
#include "scalelab/report/write_report.hpp"

namespace scalelab::cli {
namespace {
size_t earlier_count(const Json& ledger) { return ledger.value("earlier_claims", Json::array()).size(); }
}  // namespace

void add_check(CLI::App& app) {
  auto o = std::make_shared<ledger::CheckOptions>();
  auto only = std::make_shared<std::string>();
  auto no_report = std::make_shared<bool>(false);
  auto gnuplot = std::make_shared<std::string>("gnuplot");
  auto compare_with = std::make_shared<report::CompareWith>(report::CompareWith{report::CompareWith::published, ""});
  CLI::App* cmd = app.add_subcommand(
      "check", "Run one experiment per claim (E1-E12, A1-A13, B1-B4), compute each verdict from the "
               "measurements and write the ledger and its report (docs/ledger.md)");
  cmd->add_flag("--quick", o->quick, "synthetic tasks and smaller grids (about 2 minutes); verdicts marked provisional");
  cmd->add_option("--only", *only, "comma-separated claim IDs, e.g. E3,A4,B1 (default: all 29)");
  cmd->add_option("--out,-o", o->out, "output directory (created; refused if it holds other files)")->capture_default_str();
  cmd->add_option("--jobs,-j", o->jobs, "runs side by side, one thread each (0: one per core); results do not depend on it")
      ->capture_default_str();
  cmd->add_option("--seeds", o->seeds, "seeds of training claims (>= 3; 0: 3); init-time claims use max(8, this)")
      ->capture_default_str();
  cmd->add_option("--claims", o->claim_files, "a claim file of your own (docs/claims-file.md), run with the built-ins; repeatable");
  auto dry = std::make_shared<bool>(false);
  cmd->add_flag("--dry-run", *dry, "print the runs the selected claims would do and an estimated time; run and write nothing");
  CLI::Option* no_report_flag =
      cmd->add_flag("--no-report", *no_report, "write the ledger's JSON and summary.md only, not report.html");
  cmd->add_option("--gnuplot", *gnuplot,
                  "gnuplot program for the report's plots; checked before the run (one that cannot run is an error)")
      ->capture_default_str();
  cmd->add_option_function<std::string>(
         "--compare-with", [compare_with](const std::string& v) { *compare_with = report::parse_compare_with(v); },
         "with --quick, the report lists the claims whose verdict differs from the full-mode ledger in this "
         "directory; checked before the run; 'none': no comparison [default: " + report::published_report_dir() +
             ", when it exists]")
      ->type_name("DIR|none")
      ->excludes(no_report_flag);
  auto list = std::make_shared<bool>(false);
  cmd->add_flag("--list", *list, "print every claim (statement, experiment, criterion) as Markdown and exit");
  cmd->add_flag("--quiet,-q", [o](int64_t) { o->progress = nullptr; }, "no progress lines");
  o->progress = &std::cerr;
  o->progress_on_terminal = ::isatty(::fileno(stderr)) != 0;
  cmd->callback([o, only, no_report, gnuplot, compare_with, list, dry, cmd] {
    if (*list) {
      if (world->rank() == 0) std::cout << ledger::claims_markdown();
      return;
    }
    if (cmd->count("--only") > 0) {  // "" is an error, not "all"
      std::vector<std::string> user_ids;
      ledger::LedgerMode mode;
      mode.quick = o->quick;
      for (const ledger::Claim& c : ledger::load_claim_files(o->claim_files, mode)) user_ids.push_back(c.info.id);
      o->only = ledger::parse_claim_ids(*only, user_ids);
    }
    if (*dry) {
      if (world->rank() == 0) ledger::dry_run(*o, std::cout);
      return;
    }
    // The report's gnuplot, before the long run: one asked for by name must work; without one
    // in PATH the report has no plots, and the user hears it now rather than after the run.
    if (!*no_report && cmd->count("--gnuplot") > 0) report::check_gnuplot(*gnuplot);
    if (!*no_report && cmd->count("--gnuplot") == 0 && world->rank() == 0 && !report::gnuplot_works(*gnuplot))
      std::cerr << "scalelab: warning: gnuplot is not in PATH: the report will have no plots (install "
                   "gnuplot-nox, or pass --gnuplot or --no-report)\n";
    // The full run the report compares with, read now: a bad directory fails in a second, not after the run.
    if (!*no_report) report::full_run_to_compare(*compare_with, o->quick ? "quick" : "full");
    o->comm = world;
    const ledger::CheckResult r = ledger::run_check(*o);
    if (!r.written) return;  // a worker rank under MPI: rank 0 reports
    std::cout << "scalelab check: " << r.ledger["claims"].size() - earlier_count(r.ledger) << " claim(s), " << r.runs << " run(s) ("
              << r.cached_runs << " from the cache) in " << static_cast<int64_t>(r.seconds + 0.5) << " s\n";
    const Json earlier = r.ledger.value("earlier_claims", Json::array());
    for (const Json& c : r.ledger["claims"]) {
      std::cout << "  " << c["id"].get<std::string>() << "  " << c["verdict"].get<std::string>();
      if (!c["condition"].get<std::string>().empty()) std::cout << " " << c["condition"].get<std::string>();
      if (c["provisional"].get<bool>()) std::cout << "  [provisional (quick)]";
      if (std::find(earlier.begin(), earlier.end(), c["id"]) != earlier.end()) std::cout << "  [earlier check]";
      std::cout << "\n";
    }
    std::cout << "wrote " << o->out << "/ledger.json, " << o->out << "/claims/<ID>.json and " << o->out << "/summary.md\n";
    if (!*no_report) {
      const report::ReportResult rep = report::write_report(o->out, {.gnuplot = *gnuplot, .compare_with = *compare_with});
      std::cout << "report: " << rep.html_path << " (open it in a browser) and " << rep.markdown_path << "\n";
    }
  });
}

}  // namespace scalelab::cli
