// scalelab report: turn the JSON a `scalelab check` run wrote into report.html and report.md.
#include <iostream>
#include <memory>

#include "commands.hpp"
#include "scalelab/core/error.hpp"
#include "scalelab/report/write_report.hpp"

namespace scalelab::cli {

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
                  "gnuplot program used to draw the plots (name in PATH or a path)")
      ->capture_default_str();
  cmd->footer(
      "report.html is one file: plots inlined as SVG, no scripts, nothing fetched from the network.\n"
      "report.md has the same text, with the plots in DIR/plots/<plot-id>.svg. Without gnuplot the\n"
      "report says so and keeps its tables. Example: scalelab report scalelab-report");
  cmd->callback([a] {
    SL_CHECK(!a->dir.empty(), "report \"\": names no directory (give the directory scalelab check --out wrote)");
    const report::ReportResult r = report::write_report(a->dir, a->options);
    std::cout << "wrote " << r.html_path << " and " << r.markdown_path << ": " << r.claims << " claims, "
              << r.plots_drawn << " plots";
    if (r.plots_failed) std::cout << " (" << r.plots_failed << " not drawn)";
    if (!r.gnuplot_found) std::cout << "; gnuplot not found (\"" << a->options.gnuplot << "\"): no plots";
    std::cout << "\n";
  });
}

}  // namespace scalelab::cli
