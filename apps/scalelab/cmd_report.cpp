// scalelab report: turn the JSON a `scalelab check` run wrote into report.html and report.md.
#include <signal.h>

#include <csignal>
#include <iostream>
#include <memory>

#include "commands.hpp"
#include "scalelab/core/error.hpp"
#include "scalelab/report/gnuplot.hpp"
#include "scalelab/report/text.hpp"
#include "scalelab/report/write_report.hpp"

namespace scalelab::cli {

namespace {

// SIGINT / SIGTERM while the report is made: the flag makes the gnuplot child be killed (with its
// process group) and its temporary directory removed, and write_report throw ReportStopped before
// writing anything. The handlers then fall back to the default, so a second signal ends the
// process at once.
volatile std::sig_atomic_t report_stop_signal = 0;
bool report_handles_int = false, report_handles_term = false;

extern "C" void on_report_stop_signal(int sig) {
  report_stop_signal = sig;
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  if (report_handles_int) sigaction(SIGINT, &dfl, nullptr);  // async-signal-safe
  if (report_handles_term) sigaction(SIGTERM, &dfl, nullptr);
}

// Installs the handlers for the lifetime of the object and restores the previous ones; a signal
// the parent set to be ignored (a background job of a script) stays ignored.
class ReportSignalHandlers {
 public:
  ReportSignalHandlers() {
    struct sigaction sa {};
    sa.sa_handler = on_report_stop_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, nullptr, &old_int_);
    sigaction(SIGTERM, nullptr, &old_term_);
    report_handles_int = old_int_.sa_handler != SIG_IGN;
    report_handles_term = old_term_.sa_handler != SIG_IGN;
    if (report_handles_int) sigaction(SIGINT, &sa, nullptr);
    if (report_handles_term) sigaction(SIGTERM, &sa, nullptr);
  }
  ~ReportSignalHandlers() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }
  ReportSignalHandlers(const ReportSignalHandlers&) = delete;
  ReportSignalHandlers& operator=(const ReportSignalHandlers&) = delete;

 private:
  struct sigaction old_int_ {}, old_term_ {};
};

}  // namespace

void add_report(CLI::App& app) {
  struct ReportArgs {
    std::string dir;
    report::ReportOptions options;
  };
  auto a = std::make_shared<ReportArgs>();
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
  cmd->footer(
      "report.html is one file: plots inlined as SVG, no scripts, nothing fetched from the network.\n"
      "report.md has the same text, with the plots in DIR/plots/<plot-id>.svg. Without gnuplot in\n"
      "PATH the report says so and keeps its tables. SIGINT / SIGTERM stop it (exit 130 / 143)\n"
      "without writing anything. Example: scalelab report scalelab-report");
  cmd->callback([a, cmd] {
    // A program asked for by name must work: checked before the ledger is read.
    if (cmd->count("--gnuplot") > 0) report::check_gnuplot(a->options.gnuplot);
    const ReportSignalHandlers handlers;
    a->options.stop = &report_stop_signal;
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
