// report/write_report: `scalelab report DIR`. Reads the JSON a `scalelab check` run wrote into
// DIR and writes DIR/report.html (one self-contained file) and DIR/report.md with its plots in
// DIR/plots/<plot-id>.svg.
#pragma once
#include <string>

namespace scalelab::report {

struct ReportOptions {
  std::string gnuplot = "gnuplot";  // program name (searched in PATH) or path
};

struct ReportResult {
  std::string html_path;
  std::string markdown_path;
  int claims = 0;
  int plots_drawn = 0;
  int plots_failed = 0;
  bool gnuplot_found = false;
};

// Throws Error when DIR holds no ledger, a file breaks schema 1, or an output cannot be written.
// A plot gnuplot cannot draw is reported in the page instead.
ReportResult write_report(const std::string& dir, const ReportOptions& options);

}  // namespace scalelab::report
