// report/gnuplot: one plot spec drawn as SVG by a gnuplot child process.
//
// scalelab does not draw plots itself: it writes the data and a script into a temporary
// directory and runs gnuplot on them (`set terminal svg`). A plot that fails is returned as a
// problem to show in the page, not thrown, so one bad plot never costs the report.
#pragma once
#include <string>

#include "scalelab/report/ledger_files.hpp"

namespace scalelab::report {

struct PlotResult {
  bool ok = false;
  std::string svg;      // the file gnuplot wrote, as is
  std::string problem;  // why not, when !ok
};

// The gnuplot script for a spec whose data files are in data_dir (exposed for tests; writes nothing).
std::string gnuplot_script(const PlotSpec& spec, const std::string& data_dir,
                           const std::string& output_svg);

// Runs `program --version`; false when it cannot be started or fails.
bool gnuplot_works(const std::string& program);

// Draws the spec; never throws for a gnuplot failure (bad data, missing program, timeout).
PlotResult draw_plot(const PlotSpec& spec, const std::string& program);

}  // namespace scalelab::report
