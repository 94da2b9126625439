// report/gnuplot: one plot spec drawn as SVG by a gnuplot child process.
//
// scalelab does not draw plots itself: it writes the data and a script into a temporary
// directory and runs gnuplot on them (`set terminal svg`). A plot that fails is returned as a
// problem to show in the page, not thrown, so one bad plot never costs the report.
#pragma once
#include <csignal>
#include <string>

#include "scalelab/report/ledger_files.hpp"

namespace scalelab::report {

// Every plot is drawn PlotWidth user units wide, all its text (ticks, labels, key, heatmap cell
// values) at PlotFontSize. The page shows a plot at most PlotWidth CSS px wide (render_html.cpp);
// on a 420 px phone it is about 391 px wide, and 17 * 391 / 640 = 10.4 px of text, the least that
// reads there (tests/report/test_report_browser.sh measures every plot's text at 420 px).
inline constexpr int kPlotWidth = 640;
inline constexpr int kPlotFontSize = 17;

struct PlotResult {
  bool ok = false;
  std::string svg;      // the file gnuplot wrote, as is
  std::string problem;  // why not, when !ok
  bool stopped = false;  // gnuplot was killed because *DrawLimits::stop became non-zero
};

struct DrawLimits {
  double timeout_seconds = 60;                        // per plot; gnuplot is killed after it
  const volatile std::sig_atomic_t* stop = nullptr;  // non-zero (a signal): kill gnuplot now
};

// A gnuplot string literal holding s as plain text: single-quoted, the only form in which gnuplot
// substitutes nothing (no `command` backquotes, no @macros, no backslash escapes; a quote is
// doubled). Control characters become spaces (a newline would end the command), NUL is dropped,
// invalid UTF-8 becomes U+FFFD. Every string of a script goes through it: labels, titles, series
// names, category labels and file names.
std::string gnuplot_string(const std::string& s);

// The gnuplot script for a spec whose data files are in data_dir (exposed for tests; writes nothing).
std::string gnuplot_script(const PlotSpec& spec, const std::string& data_dir,
                           const std::string& output_svg);

// Runs `program --version`; false when it cannot be started or fails.
bool gnuplot_works(const std::string& program);

// Throws Error naming the program when it cannot be gnuplot: an empty name, a path that is
// missing, a directory, not a regular file or not executable, a name not found in PATH, or a
// `--version` that fails, takes over 10 s or does not print gnuplot's version line. For a
// program the user asked for, checked before any long work.
void check_gnuplot(const std::string& program);

// Draws the spec; never throws for a gnuplot failure (bad data, missing program, timeout, stop).
PlotResult draw_plot(const PlotSpec& spec, const std::string& program, const DrawLimits& limits = {});

}  // namespace scalelab::report
