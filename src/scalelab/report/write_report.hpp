// report/write_report: `scalelab report DIR`. Reads the JSON a `scalelab check` run wrote into
// DIR and writes DIR/report.html (one self-contained file) and DIR/report.md with its plots in
// DIR/plots/<plot-id>.svg.
#pragma once
#include <csignal>
#include <map>
#include <string>

#include "scalelab/core/error.hpp"
#include "scalelab/report/full_run_comparison.hpp"
#include "scalelab/report/ledger_files.hpp"

namespace scalelab::report {

struct ReportOptions {
  std::string gnuplot = "gnuplot";  // program name (searched in PATH) or path
  double plot_timeout_seconds = 60;  // one gnuplot run; killed after it
  double plots_seconds = 600;        // all plots together; plots not started by then are not drawn
  const volatile std::sig_atomic_t* stop = nullptr;  // non-zero (SIGINT / SIGTERM): stop, write nothing
  // A quick ledger's opening lists the claims whose verdict the full run differs on
  // (full_run_comparison.hpp); `scalelab report` and `check` default to kind published.
  CompareWith compare_with;
};

// *ReportOptions::stop became non-zero while the report was made: the gnuplot running then was
// killed, its temporary directory removed, and nothing was written.
class ReportStopped : public Error {
 public:
  explicit ReportStopped(int signal_number)
      : Error("the report was stopped by a signal"), signal(signal_number) {}
  int signal;
};

struct ReportResult {
  std::string html_path;
  std::string markdown_path;
  int claims = 0;
  int plots_drawn = 0;
  int plots_failed = 0;
  int plots_timed_out = 0;  // killed after plot_timeout_seconds, or not started within plots_seconds
  bool gnuplot_found = false;
};

// Throws Error when DIR holds no ledger, a file breaks schema 1, options.compare_with names a
// directory that holds no full-mode ledger.json, or an output cannot be written
// (checked before any plot is drawn: report.html, report.md and plots/ must be a regular file,
// a regular file and a directory, or absent, and DIR writable); ReportStopped on a stop. A plot
// gnuplot cannot draw is reported in the page instead. Every file is written at the end, each
// atomically: an error or a stop leaves DIR as it was.
ReportResult write_report(const std::string& dir, const ReportOptions& options);

// The report of a ledger already read, made in memory: what write_report writes. Plots are drawn
// only when draw_plots (else the page says gnuplot is not available); `full_run`, when given, is
// compared with in the opening (options.compare_with is not read here). Exposed for the fuzzer.
struct RenderedReport {
  std::string html;
  std::string markdown;
  std::map<std::string, std::string> svg_files;  // plots/<name>.svg -> its content
  ReportResult result;                           // without the paths
};
RenderedReport render_report(const Ledger& ledger, const ReportOptions& options, bool draw_plots,
                             const FullRun* full_run = nullptr);

}  // namespace scalelab::report
