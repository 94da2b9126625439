#include "scalelab/report/gnuplot.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "scalelab/core/error.hpp"
#include "scalelab/report/child_process.hpp"
#include "scalelab/report/text.hpp"

namespace scalelab::report {
namespace {

namespace fs = std::filesystem;

// Okabe-Ito: distinguishable with the common colour-vision deficiencies.
const char* const kColours[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                "#E69F00", "#56B4E9", "#000000", "#F0E442"};
constexpr int kColourCount = sizeof(kColours) / sizeof(kColours[0]);

std::string datum(double v) {
  if (!std::isfinite(v)) return "NaN";  // gnuplot leaves a gap
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  SL_CHECK(out, "cannot write ", path.string());
  out << text;
  out.flush();
  SL_CHECK(out, "write to ", path.string(), " failed (disk full?)");
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool has_band(const Series& s) {
  for (const auto& p : s.points)
    if (p.size() == 4) return true;
  return false;
}

// gnuplot puts log-axis labels at powers of ten only, so a range inside one decade (d_k 16 to 64)
// would have none. Label the swept values themselves when there are few, else 1-2-5 steps.
std::string log_tics(const char* axis, const PlotSpec& spec, size_t column) {
  std::set<double> values;
  double lo = INFINITY, hi = -INFINITY;
  for (const Series& ser : spec.series)
    for (const auto& p : ser.points) {
      // x: column 0; y: the value and its band (columns 1..3).
      const size_t last = column == 0 ? 0 : p.size() - 1;
      for (size_t k = column; k <= last; ++k) {
        if (!(std::isfinite(p[k]) && p[k] > 0)) continue;
        if (k == column) values.insert(p[k]);
        lo = std::min(lo, p[k]);
        hi = std::max(hi, p[k]);
      }
    }
  if (values.empty()) return "";
  std::vector<double> tics;
  if (column == 0 && values.size() <= 10) {
    tics.assign(values.begin(), values.end());
  } else {
    if (!(hi / lo <= 1e3)) return "";  // several decades (or hi / lo overflows): gnuplot's own labels
    // Integer exponents, at most five of them: a loop on the doubles themselves never ends when
    // hi * 10 overflows to inf (values near 1e308) or 10^floor(log10(lo)) underflows to 0 (denormals).
    const int first = static_cast<int>(std::floor(std::log10(lo)));
    for (int e = first; e <= first + 4; ++e) {
      const double decade = std::pow(10.0, e);
      for (double m : {1.0, 2.0, 5.0}) {
        const double t = m * decade;
        if (std::isfinite(t) && t > 0 && t >= lo / 1.5 && t <= hi * 1.5) tics.push_back(t);
      }
    }
    if (tics.empty()) return "";
  }
  std::string out = std::string("set ") + axis + "tics (";
  for (size_t i = 0; i < tics.size(); ++i) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", tics[i]);
    out += (i ? ", " : "") + gnuplot_string(buf) + " " + datum(tics[i]);
  }
  return out + ")\n";
}

// gnuplot widens a log axis to whole decades (16..64 becomes 10..100); keep it to the data, with a
// little room so the end markers and their labels are not cut.
std::string log_range(const char* axis, const PlotSpec& spec) {
  double lo = INFINITY, hi = -INFINITY;
  for (const Series& ser : spec.series)
    for (const auto& p : ser.points)
      if (std::isfinite(p[0]) && p[0] > 0) {
        lo = std::min(lo, p[0]);
        hi = std::max(hi, p[0]);
      }
  if (!(lo < hi)) return "";
  const double pad = std::pow(hi / lo, 0.04);
  const double from = lo / pad, to = hi * pad;
  if (!(std::isfinite(from) && std::isfinite(to) && from > 0 && from < to)) return "";  // extreme values
  return std::string("set ") + axis + "range [" + datum(from) + ":" + datum(to) + "]\n";
}

// Characters (UTF-8 code points) in a label.
size_t chars_in(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

// About how many characters of the plot font fit across the plot (a glyph is about 0.55 em).
constexpr double kCharsAcross = kPlotWidth / (0.55 * kPlotFontSize);

// Category labels that would collide side by side (about 50 characters across the plot area)
// are drawn slanted.
bool long_labels(const std::vector<std::string>& labels) {
  size_t total = 0;
  for (const std::string& l : labels) total += chars_in(l) + 2;
  return total > 0.75 * kCharsAcross;
}

// The left margin, in characters, that keeps the slanted labels (rotated 35°, right-aligned at
// their tic) inside the plot: label i ends about 0.82 of its length left of its tic, which sits
// (i + 0.5) category widths right of the margin. At least gnuplot's usual 10.
int slanted_left_margin(const std::vector<std::string>& labels) {
  double margin = 10;
  for (int pass = 0; pass < 3; ++pass) {  // the category width depends on the margin
    const double category = (kCharsAcross - margin - 4) / std::max<size_t>(labels.size(), 1);
    double need = 10;
    for (size_t i = 0; i < labels.size(); ++i)
      need = std::max(need, 0.82 * static_cast<double>(chars_in(labels[i])) - (static_cast<double>(i) + 0.5) * category + 1);
    margin = std::min(need, 0.45 * kCharsAcross);
  }
  return static_cast<int>(std::ceil(margin));
}

// "set xtics ("a" 0, "b" 1)": category labels at integer positions.
std::string tic_labels(const char* axis, const std::vector<std::string>& labels) {
  std::string out = std::string("set ") + axis + "tics (";
  for (size_t i = 0; i < labels.size(); ++i)
    out += (i ? ", " : "") + gnuplot_string(labels[i]) + " " + std::to_string(i);
  return out + ")\n";
}

// Data files, one per series for lines, one table for bars and heatmaps; returns the plot command.
std::string lines_plot(const PlotSpec& spec, const fs::path& dir, bool write_files) {
  std::string cmd;
  for (size_t i = 0; i < spec.series.size(); ++i) {
    const Series& s = spec.series[i];
    const fs::path file = dir / ("series" + std::to_string(i) + ".dat");
    if (write_files) {
      std::string data;
      for (const auto& p : s.points)
        data += datum(p[0]) + " " + datum(p[1]) + " " + datum(p.size() == 4 ? p[2] : NAN) + " " +
                datum(p.size() == 4 ? p[3] : NAN) + "\n";
      write_text(file, data);
    }
    const std::string colour = kColours[i % kColourCount];
    const std::string f = gnuplot_string(file.string());
    if (has_band(s))
      cmd += (cmd.empty() ? "" : ", ") + f + " using 1:3:4 with filledcurves fc rgb " + gnuplot_string(colour) +
             " fs transparent solid 0.18 noborder notitle";
    // Markers help read a few points; on a dense curve they only smear it.
    const std::string style = s.points.size() > 40 ? " with lines lw 2" : " with linespoints lw 2 pt 7 ps 0.55";
    cmd += (cmd.empty() ? "" : ", ") + f + " using 1:2" + style + " lc rgb " + gnuplot_string(colour) + " title " +
           gnuplot_string(s.label);
  }
  return cmd;
}

std::string bars_plot(const PlotSpec& spec, const fs::path& dir, bool write_files, bool bands) {
  // One row per category; per series the columns y, lo, hi (lo = hi = y without a band).
  const size_t n = spec.cols.size();
  std::vector<std::vector<double>> table(n, std::vector<double>(3 * spec.series.size(), NAN));
  // On a log axis a bar of height 0 has no top; leave it out rather than draw a stub.
  auto shown = [&](double v) { return spec.log_y && !(v > 0) ? NAN : v; };
  for (size_t s = 0; s < spec.series.size(); ++s)
    for (const auto& p : spec.series[s].points) {
      const auto row = static_cast<size_t>(p[0]);
      table[row][3 * s] = shown(p[1]);
      table[row][3 * s + 1] = shown(p.size() == 4 ? p[2] : p[1]);
      table[row][3 * s + 2] = shown(p.size() == 4 ? p[3] : p[1]);
    }
  const fs::path file = dir / "bars.dat";
  if (write_files) {
    std::string data;
    for (const auto& row : table) {
      for (size_t c = 0; c < row.size(); ++c) {
        if (c) data += ' ';
        data += datum(row[c]);
      }
      data += "\n";
    }
    write_text(file, data);
  }
  std::string cmd;
  for (size_t s = 0; s < spec.series.size(); ++s) {
    const std::string y = std::to_string(3 * s + 1);
    const std::string cols =
        bands ? y + ":" + std::to_string(3 * s + 2) + ":" + std::to_string(3 * s + 3) : y;
    cmd += (s ? ", " : "") + gnuplot_string(file.string()) + " using " + cols + " title " +
           gnuplot_string(spec.series[s].label) + " lc rgb " + gnuplot_string(kColours[s % kColourCount]);
  }
  return cmd;
}

std::string heatmap_plot(const PlotSpec& spec, const fs::path& dir, bool write_files) {
  const fs::path file = dir / "matrix.dat";
  if (write_files) {
    std::string data;
    for (const auto& row : spec.matrix) {
      for (size_t c = 0; c < row.size(); ++c) {
        if (c) data += ' ';
        data += datum(row[c]);
      }
      data += "\n";
    }
    write_text(file, data);
  }
  const std::string f = gnuplot_string(file.string());
  // `pixels` draws each cell as an SVG rectangle rather than an embedded PNG.
  std::string cmd = f + " matrix with image pixels notitle";
  const size_t cells = spec.rows.size() * spec.cols.size();
  if (cells <= 100)  // small enough to print the value in each cell
    cmd += ", " + f + " matrix using 1:2:(sprintf('%.3g', $3)) with labels notitle";
  return cmd;
}

// gnuplot echoes the failing command before its message ("plot.gp" line 12: all points y value
// undefined!); keep the messages, or the log's tail when there are none.
std::string error_lines(const std::string& log) {
  std::string out, line;
  std::istringstream in(log);
  while (std::getline(in, line))
    if (line.find("\" line ") != std::string::npos) {
      if (!out.empty()) out += "; ";
      out += line;
    }
  if (out.empty()) out = log;
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  if (out.size() > 400) out = out.substr(out.size() - 400);
  return out;
}

bool any_finite_point(const PlotSpec& spec) {
  for (const Series& s : spec.series)
    for (const auto& p : s.points)
      if (std::isfinite(p[0]) && std::isfinite(p[1])) return true;
  for (const auto& row : spec.matrix)
    for (double v : row)
      if (std::isfinite(v)) return true;
  return false;
}

// Runs gnuplot on its arguments; "" when it succeeded, else what went wrong, for the page.
std::string run_gnuplot(const std::vector<std::string>& argv, const fs::path& log, const DrawLimits& limits,
                        bool& stopped) {
  const ProcessOutcome r = run_process(argv, log, limits.timeout_seconds, limits.stop);
  stopped = r.stopped;
  if (r.ok()) return "";
  const std::string program = "gnuplot program " + scalelab::quote_for_message(argv[0]);
  if (r.stopped) return program + " was stopped by a signal";
  if (!r.started) return "cannot run " + program + ": " + r.start_error;
  if (r.timed_out) return program + " did not finish within " + format_number(limits.timeout_seconds) + " s (killed)";
  const std::string message = scalelab::quote_for_message(error_lines(read_text(log)), 400);
  const std::string how = r.exited ? "exited with status " + std::to_string(r.exit_status)
                                   : "was killed by signal " + std::to_string(r.signal);
  return program + " " + how + (message.empty() ? "" : ": " + message);
}

std::string script_for(const PlotSpec& spec, const fs::path& dir, const std::string& output,
                       bool write_files) {
  std::ostringstream s;
  const bool slanted = spec.kind == "bars" && long_labels(spec.cols);  // labels need height
  s << "set terminal svg size " << kPlotWidth << "," << (slanted ? 560 : 400) << " dynamic noenhanced font 'sans,"
    << kPlotFontSize << "' background 'white'\n"
    << "set output " << gnuplot_string(output) << "\n"
    << "set encoding utf8\n"
    << "set border lc rgb '#555555'\n"
    << "set grid lc rgb '#e4e4e4' lw 1\n"
    << "set key below horizontal noreverse samplen 2 spacing 1.1\n"
    << "set xlabel " << gnuplot_string(spec.x_label) << "\n"
    << "set ylabel " << gnuplot_string(spec.y_label) << "\n";
  // The band is named in the title (a label inside would sit under the data).
  if (spec.y_band && std::isfinite(spec.y_band->first) && std::isfinite(spec.y_band->second))
    s << "set object 1 rectangle from graph 0, first " << datum(spec.y_band->first) << " to graph 1, first "
      << datum(spec.y_band->second) << " behind fillcolor rgb '#dcefd8' fillstyle solid 1.0 noborder\n";
  if (spec.log_y) s << "set format y '%g'\n";
  if (spec.kind == "lines") {
    // On a log axis gnuplot widens the range to whole decades; keep it to the data instead.
    if (spec.log_x) s << "set logscale x\n" << log_range("x", spec) << log_tics("x", spec, 0);
    if (spec.log_y) s << "set logscale y\n" << log_tics("y", spec, 1);
    s << "plot " << lines_plot(spec, dir, write_files) << "\n";
  } else if (spec.kind == "bars") {
    bool bands = false;
    for (const Series& ser : spec.series) bands = bands || has_band(ser);
    s << "set style data histograms\n"
      << (bands ? "set style histogram errorbars gap 1.5 lw 1\n" : "set style histogram clustered gap 1.5\n")
      << "set style fill solid 0.85 noborder\n"
      << "set boxwidth 0.9\n"
      << "set xrange [-0.6:" << datum(static_cast<double>(spec.cols.size()) - 0.4) << "]\n"
      << "set grid noxtics\n"
      << "set errorbars lc rgb '#333333' lw 1.2\n"
      << (slanted ? "set xtics nomirror rotate by 35 right\nset rmargin 4\nset lmargin " +
                        std::to_string(slanted_left_margin(spec.cols)) + "\n"
                  : std::string("set xtics nomirror\n"))
      << tic_labels("x", spec.cols);
    if (spec.log_y) s << "set logscale y\n";
    s << "plot " << bars_plot(spec, dir, write_files, bands) << "\n";
  } else {
    s << "unset grid\n"
      << "unset key\n"
      << "set palette defined (0 '#f7fbff', 1 '#9ecae1', 2 '#3182bd')\n"
      << "set xrange [-0.5:" << datum(static_cast<double>(spec.cols.size()) - 0.5) << "]\n"
      << "set yrange [" << datum(static_cast<double>(spec.rows.size()) - 0.5) << ":-0.5]\n"
      << "set xtics nomirror\nset ytics nomirror\n"
      << tic_labels("x", spec.cols) << tic_labels("y", spec.rows);
    s << "plot " << heatmap_plot(spec, dir, write_files) << "\n";
  }
  return s.str();
}

}  // namespace

std::string gnuplot_string(const std::string& raw) {
  const std::string s = valid_utf8(raw);
  std::string out = "'";
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\0') continue;
    if (c == '\'') out += "''";
    else if (u < 0x20 || u == 0x7F) out += ' ';  // a newline would end the command
    else out += c;
  }
  return out + "'";
}

std::string gnuplot_script(const PlotSpec& spec, const std::string& data_dir,
                           const std::string& output_svg) {
  return script_for(spec, data_dir, output_svg, false);
}

bool gnuplot_works(const std::string& program) {
  try {
    TempDir dir("scalelab-gnuplot-");
    bool stopped = false;
    return run_gnuplot({program, "--version"}, dir.path() / "version.log", {10, nullptr}, stopped).empty();
  } catch (const Error&) {  // no process could be made: as good as no gnuplot
    return false;
  }
}

void check_gnuplot(const std::string& program) {
  const std::string name = "gnuplot program " + scalelab::quote_for_message(program);
  SL_CHECK(!program.empty(), "the gnuplot program is empty (pass a name in PATH or a path)");
  if (program.find('/') != std::string::npos) {
    struct stat st {};
    SL_CHECK(::stat(program.c_str(), &st) == 0, name, ": no such file");
    SL_CHECK(!S_ISDIR(st.st_mode), name, ": is a directory, not a program");
    SL_CHECK(S_ISREG(st.st_mode), name, ": is not a regular file");
    SL_CHECK(::access(program.c_str(), X_OK) == 0, name, ": not executable");
  }
  TempDir dir("scalelab-gnuplot-");
  const fs::path log = dir.path() / "version.log";
  const ProcessOutcome r = run_process({program, "--version"}, log, 10);
  SL_CHECK(r.started, name, ": cannot be run (", r.start_error,
           program.find('/') == std::string::npos ? "; not found in PATH" : "", ")");
  SL_CHECK(!r.timed_out, name, ": '--version' did not finish within 10 s");
  SL_CHECK(r.exited && r.exit_status == 0, name, ": '--version' ",
           r.exited ? "exited with status " + std::to_string(r.exit_status)
                    : "was killed by signal " + std::to_string(r.signal),
           " (is it gnuplot?)");
  const std::string version = read_text(log);
  SL_CHECK(version.rfind("gnuplot", 0) == 0, name, ": '--version' printed ",
           scalelab::quote_for_message(version.substr(0, version.find('\n')), 60), ", not gnuplot's version line");
}

PlotResult draw_plot(const PlotSpec& spec, const std::string& program, const DrawLimits& limits) {
  PlotResult result;
  try {
    if (spec.kind != "heatmap" && spec.series.empty()) {
      result.problem = "the plot spec has no series";
      return result;
    }
    if (spec.kind == "heatmap" && spec.matrix.empty()) {
      result.problem = "the heatmap has an empty matrix";
      return result;
    }
    if (!any_finite_point(spec)) {
      result.problem = "no value to plot (every value is null: not measured or never reached)";
      return result;
    }
    TempDir dir("scalelab-plot-");
    const fs::path output = dir.path() / "plot.svg";
    write_text(dir.path() / "plot.gp", script_for(spec, dir.path(), output.string(), true));
    const std::string problem =
        run_gnuplot({program, (dir.path() / "plot.gp").string()}, dir.path() / "gnuplot.log", limits,
                    result.stopped);
    if (!problem.empty()) {
      result.problem = problem;
      return result;
    }
    result.svg = read_text(output);
    if (result.svg.find("<svg") == std::string::npos) {
      result.problem = "gnuplot program " + scalelab::quote_for_message(program) + " exited normally but wrote no SVG";
      return result;
    }
    result.ok = true;
  } catch (const Error& e) {  // temp-dir or file trouble: shown in the page like a gnuplot failure
    result.problem = e.what();
  }
  return result;
}

}  // namespace scalelab::report
