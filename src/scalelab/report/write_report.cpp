#include "scalelab/report/write_report.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>

#include "scalelab/core/atomic_file.hpp"
#include "scalelab/core/error.hpp"
#include "scalelab/report/answers.hpp"
#include "scalelab/report/claim_catalogue.hpp"
#include "scalelab/report/claim_sections.hpp"
#include "scalelab/report/document.hpp"
#include "scalelab/report/full_run_comparison.hpp"
#include "scalelab/report/gnuplot.hpp"
#include "scalelab/report/ledger_files.hpp"
#include "scalelab/report/opening.hpp"
#include "scalelab/report/plain_words.hpp"
#include "scalelab/report/question_figures.hpp"
#include "scalelab/report/sources.hpp"
#include "scalelab/report/svg_inline.hpp"
#include "scalelab/report/text.hpp"
#include "scalelab/report/user_claim_sections.hpp"

namespace scalelab::report {
namespace {

namespace fs = std::filesystem;

using Clock = std::chrono::steady_clock;

// Throws ReportStopped when a stop was asked for.
void stop_if_asked(const ReportOptions& options) {
  if (options.stop && *options.stop) throw ReportStopped(static_cast<int>(*options.stop));
}

// Draws every plot of every claim, within the time limits; the SVG files to write beside
// report.md are collected in svg_files (name -> content) and written only when all is done.
// The figures of each owner: a claim (by id) or a question (by "?" and its anchor).
struct PlotOwner {
  std::string key;  // a claim's id, or "?" and a question's anchor
  std::vector<PlotSpec> plots;
  bool plain = true;  // labels in words (plain_plot); a user's claim keeps its own
};

ClaimFigures draw_figures(const std::vector<PlotOwner>& owners,
                          const ReportOptions& options, bool gnuplot_found, ReportResult& result,
                          std::map<std::string, std::string>& svg_files) {
  ClaimFigures figures;
  std::set<std::string> used_names;
  int counter = 0;
  const Clock::time_point start = Clock::now();
  for (const auto& [owner, plots, plain] : owners) {
    std::vector<Figure>& out = figures[owner];
    const std::string owner_name = owner.rfind('?', 0) == 0 ? owner.substr(1) : owner;
    for (const PlotSpec& raw : plots) {
      const PlotSpec spec = plain ? plain_plot(raw) : raw;
      stop_if_asked(options);
      // Plot ids should be unique; if two claims share one, the second gets the claim's id too
      // (it names both the SVG file and the figure's anchor).
      std::string name = spec.id;
      if (!used_names.insert(name).second) {
        name = owner_name + "-" + spec.id;
        used_names.insert(name);
      }
      Figure f;
      f.id = name;
      f.title = spec.title;
      f.md_path = "plots/" + name + ".svg";
      const double left = options.plots_seconds - std::chrono::duration<double>(Clock::now() - start).count();
      if (!gnuplot_found) {
        f.problem = "gnuplot (" + scalelab::quote_for_message(options.gnuplot) + ") is not available";
      } else if (left <= 0) {
        f.problem = "not started: the plots had taken the report's limit of " + format_number(options.plots_seconds) + " s";
        result.plots_timed_out += 1;
      } else {
        const PlotResult drawn =
            draw_plot(spec, options.gnuplot, {std::min(options.plot_timeout_seconds, left), options.stop});
        if (drawn.stopped) stop_if_asked(options);
        if (drawn.ok) {
          try {
            f.svg = inline_svg(drawn.svg, "p" + std::to_string(counter++) + "-", spec.title.empty() ? spec.id : spec.title);
            svg_files[name] = drawn.svg;
          } catch (const Error& e) {
            f.svg.clear();
            f.problem = e.what();
          }
        } else {
          f.problem = drawn.problem;
          if (drawn.problem.find("did not finish within") != std::string::npos) result.plots_timed_out += 1;
        }
      }
      (f.svg.empty() ? result.plots_failed : result.plots_drawn) += 1;
      out.push_back(std::move(f));
    }
  }
  return figures;
}

// Refuses, before any plot is drawn, an output that could not be written at the end.
void check_outputs(const fs::path& root) {
  for (const char* file : {"report.html", "report.md"}) {
    std::error_code ec;
    const fs::file_status st = fs::symlink_status(root / file, ec);
    SL_CHECK(st.type() == fs::file_type::not_found || st.type() == fs::file_type::regular,
             scalelab::quote_for_message((root / file).string()), ": exists and is not a regular file; not replaced");
  }
  std::error_code ec;
  const fs::file_status plots = fs::symlink_status(root / "plots", ec);
  SL_CHECK(plots.type() == fs::file_type::not_found || plots.type() == fs::file_type::directory,
           scalelab::quote_for_message((root / "plots").string()), ": exists and is not a directory");
  SL_CHECK(::access(root.c_str(), W_OK) == 0, scalelab::quote_for_message(root.string()),
           ": cannot write there (", std::strerror(errno), ")");
}

Document build_document(const Ledger& ledger, const std::vector<const ClaimRecord*>& claims,
                        const ClaimFigures& figures, const ReportOptions& options, bool gnuplot_found,
                        const FullRun* full_run) {
  Document doc;
  doc.title = "scalelab: the claims ledger";
  doc.blocks.push_back(Heading{1, "top", {txt("Why sqrt(d_model), and why sqrt(d_k)? What the measurements say")}});

  std::string meta = std::to_string(claims.size()) + " claims measured by scalelab";
  if (!ledger.version.empty()) meta += " " + ledger.version;
  if (!ledger.cpu.empty() && ledger.version.find(ledger.cpu) == std::string::npos) meta += " on " + ledger.cpu;
  if (!ledger.mode.empty()) meta += ", " + ledger.mode + " mode";
  if (ledger.runs) {
    meta += ", " + format_number(*ledger.runs) + " runs";
    if (ledger.cached_runs) meta += " (" + format_number(*ledger.cached_runs) + " from the cache)";
  }
  if (ledger.train_seeds) meta += ", " + format_number(*ledger.train_seeds) + " training seeds";
  if (ledger.init_seeds) meta += ", " + format_number(*ledger.init_seeds) + " seeds at init";
  if (ledger.seconds) meta += ", in " + format_number(*ledger.seconds) + " s";
  doc.blocks.push_back(Paragraph{{emph(meta + ".")}, ""});
  if (ledger.mode == "quick")
    doc.blocks.push_back(Paragraph{
        {txt("Quick mode: synthetic tasks and small grids, so every verdict is provisional. Run "),
         code("scalelab check"), txt(" without --quick for the full ledger.")},
        "note"});
  if (!gnuplot_found)
    doc.blocks.push_back(Paragraph{
        {strong("No plots: "), txt("gnuplot could not be run (program '" + options.gnuplot +
                                   "'). Install it (Debian: gnuplot-nox) and rerun "),
         code("scalelab report"), txt("; every measurement is in the tables below.")},
        "warning"});
  Inline contents{txt("Contents: ")};
  if (full_run) contents.insert(contents.end(), {link("compared with the full run", "#compared"), txt(" · ")});
  contents.insert(contents.end(), {link("the two questions", "#q-embedding"), txt(" · "),
                                   link("follow-up questions", "#follow-up"), txt(" · "),
                                   link("summary of verdicts", "#summary"), txt(" · "),
                                   link("claims", "#claims"), txt(" · "), link("sources", "#sources")});
  doc.blocks.push_back(Paragraph{contents, ""});
  if (full_run)
    for (Block& b : comparison_blocks(ledger, *full_run)) doc.blocks.push_back(std::move(b));

  for (Block& b : opening_blocks(ledger, figures)) doc.blocks.push_back(std::move(b));
  for (Block& b : summary_blocks(ledger)) doc.blocks.push_back(std::move(b));
  doc.blocks.push_back(Heading{2, "claims", {txt("The claims, one by one")}});
  doc.blocks.push_back(Paragraph{
      {txt("Each section gives the claim, the experiment, the arms (with their full configs), the "
           "criterion that was fixed before the run, the measurements and the verdict computed from them.")},
      ""});
  for (const ClaimRecord* c : claims)
    if (!is_user_claim(*c))
      for (Block& b : claim_section(*c, figures.at(c->id))) doc.blocks.push_back(std::move(b));
  // Built-in prose in words; a user's claims keep the config keys they were written with.
  plain_prose(doc);
  for (Block& b : user_claim_blocks(claims, figures)) doc.blocks.push_back(std::move(b));
  for (Block& b : sources_blocks()) doc.blocks.push_back(std::move(b));
  return doc;
}

}  // namespace

RenderedReport render_report(const Ledger& ledger, const ReportOptions& options, bool draw_plots,
                             const FullRun* full_run) {
  RenderedReport out;
  const std::vector<const ClaimRecord*> claims = claims_in_order(ledger);
  out.result.claims = static_cast<int>(claims.size());
  out.result.gnuplot_found = draw_plots;
  // The questions' figures first: they lead the report.
  std::vector<PlotOwner> owners;
  for (const std::string& anchor : answered_questions()) owners.push_back({"?" + anchor, question_plots(ledger, anchor), true});
  for (const ClaimRecord* c : claims) owners.push_back({c->id, c->plots, !is_user_claim(*c)});
  ClaimFigures figures = draw_figures(owners, options, draw_plots, out.result, out.svg_files);
  // A follow-up shows the main plot of the claim that answers it: the SVG already drawn, inlined
  // again with ids of its own (no second gnuplot run).
  for (const std::string& anchor : answered_questions()) {
    auto claim = figures.find(answering_claim(anchor));
    if (claim == figures.end() || claim->second.empty()) continue;
    Figure f = claim->second.front();
    const std::string name = anchor.substr(2);  // "q-fp16" -> "fp16"
    if (auto raw = out.svg_files.find(f.id); raw != out.svg_files.end()) {
      try {
        f.svg = inline_svg(raw->second, "q-" + name + "-", f.title.empty() ? f.id : f.title);
      } catch (const Error& e) {
        f.svg.clear();
        f.problem = e.what();
      }
    }
    f.id = "answer-" + name;
    figures["?" + anchor].push_back(std::move(f));
  }
  const Document doc = build_document(ledger, claims, figures, options, draw_plots, full_run);
  out.html = render_html(doc);
  out.markdown = render_markdown(doc);
  return out;
}

ReportResult write_report(const std::string& dir, const ReportOptions& options) {
  SL_CHECK(!options.gnuplot.empty(), "the gnuplot program name is empty");
  SL_CHECK(options.plot_timeout_seconds > 0 && options.plots_seconds > 0,
           "the plot time limits must be > 0 s (got ", options.plot_timeout_seconds, " and ", options.plots_seconds, ")");
  const Ledger ledger = read_ledger(dir);
  const std::optional<FullRun> full_run = full_run_to_compare(options.compare_with, ledger.mode);
  const fs::path root(dir);
  check_outputs(root);
  RenderedReport report =
      render_report(ledger, options, gnuplot_works(options.gnuplot), full_run ? &*full_run : nullptr);
  stop_if_asked(options);

  ReportResult& result = report.result;
  result.html_path = (root / "report.html").string();
  result.markdown_path = (root / "report.md").string();
  // Atomic (temp file + rename): a reader never sees a half-written file.
  if (!report.svg_files.empty()) fs::create_directories(root / "plots");
  for (const auto& [name, svg] : report.svg_files)
    write_file_atomically((root / "plots" / (name + ".svg")).string(), svg);
  write_file_atomically(result.html_path, report.html);
  write_file_atomically(result.markdown_path, report.markdown);
  return result;
}

}  // namespace scalelab::report
