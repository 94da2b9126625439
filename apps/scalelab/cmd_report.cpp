// scalelab report: turn the JSON a `scalelab check` run wrote into report.html and report.md.
#include <signal.h>

#include <csignal>
#include <iostream>
#include <memory>

#include "commands.hpp"
#include "stop_signals.hpp"
#include "scalelab/core/error.hpp"
#include "scalelab/report/gnuplot.hpp"
#include "scalelab/report/text.hpp"
#include "scalelab/report/write_report.hpp"

namespace scalelab::cli {

void add_report(CLI::App& app) {
  struct ReportArgs {
    std::string dir;
    report::ReportOptions options;
  };
  auto a = std::make_shared<ReportArgs>();
  a->options.compare_with.kind = report::CompareWith::published;
  CLI::App* cmd = app.add_subcommand(
      "report", "Write DIR/report.html (self-contained) and DIR/report.md from a scalelab check directory");
  cmd->add_option("dir", a->dir, "the directory scalelab check --out wrote (holds ledger.json)")->required();
  cmd->add_option("--gnuplot", a->options.gnuplot,
                  "gnuplot program used to draw the plots (name in PATH or a path); checked before any "
                  "work: one that cannot run is an error")
      ->capture_default_str();
  cmd->add_option("--plot-timeout", a->options.plot_timeout_seconds,
                  "seconds one plot may take; gnuplot is killed after it and the plot is not drawn")
      ->check(finite_range(0.1, 86400))
      ->capture_default_str();
  cmd->add_option("--timeout", a->options.plots_seconds,
                  "seconds all plots together may take; plots not started by then are not drawn")
      ->check(finite_range(0.1, 86400))
      ->capture_default_str();
  cmd->add_option_function<std::string>(
      "--compare-with", [a](const std::string& v) { a->options.compare_with = report::parse_compare_with(v); },
      "a quick ledger's report lists the claims whose verdict differs from the full-mode ledger in "
      "this directory (its ledger.json; PUBLISHED.md gives the date and commit); 'none': no comparison "
      "[default: " + report::published_report_dir() + ", when it exists]")
      ->type_name("DIR|none");
  cmd->footer(
      "report.html is one file: plots inlined as SVG, no scripts, nothing fetched from the network.\n"
      "report.md has the same text, with the plots in DIR/plots/<plot-id>.svg. Without gnuplot in\n"
      "PATH the report says so and keeps its tables. SIGINT / SIGTERM stop it (exit 130 / 143)\n"
      "without writing anything. Example: scalelab report scalelab-report");
  cmd->callback([a, cmd] {
    // A program asked for by name must work: checked before the ledger is read.
    if (cmd->count("--gnuplot") > 0) report::check_gnuplot(a->options.gnuplot);
    const StopSignalHandlers handlers;
    a->options.stop = &stop_signal;
    report::ReportResult r;
    try {
      r = report::write_report(a->dir, a->options);
    } catch (const report::ReportStopped& stopped) {
      std::cerr << "scalelab: " << (stopped.signal == SIGINT ? "SIGINT" : "SIGTERM")
                << ": report stopped while drawing its plots; nothing was written in "
                << scalelab::quote_for_message(a->dir) << "\n";
      exit_status = 128 + stopped.signal;
      return;
    }
    std::cout << "wrote " << scalelab::quote_for_message(r.html_path) << " and "
              << scalelab::quote_for_message(r.markdown_path) << ": " << r.claims << " claims, " << r.plots_drawn
              << " plots";
    if (r.plots_failed) std::cout << " (" << r.plots_failed << " not drawn)";
    if (r.plots_timed_out) std::cout << "; " << r.plots_timed_out << " hit the time limit";
    if (!r.gnuplot_found)
      std::cout << "; gnuplot not found (" << scalelab::quote_for_message(a->options.gnuplot) << "): no plots";
    std::cout << "\n";
  });
}

}  // namespace scalelab::cli
