#include "scalelab/report/write_report.hpp"

#include <filesystem>
#include <set>

#include "scalelab/core/atomic_file.hpp"
#include "scalelab/core/error.hpp"
#include "scalelab/report/claim_catalogue.hpp"
#include "scalelab/report/claim_sections.hpp"
#include "scalelab/report/document.hpp"
#include "scalelab/report/gnuplot.hpp"
#include "scalelab/report/ledger_files.hpp"
#include "scalelab/report/opening.hpp"
#include "scalelab/report/sources.hpp"
#include "scalelab/report/svg_inline.hpp"
#include "scalelab/report/text.hpp"

namespace scalelab::report {
namespace {

namespace fs = std::filesystem;

// Draws every plot of every claim; writes each SVG beside report.md.
ClaimFigures draw_figures(const std::vector<const ClaimRecord*>& claims, const fs::path& plots_dir,
                          const ReportOptions& options, bool gnuplot_found, ReportResult& result) {
  ClaimFigures figures;
  std::set<std::string> used_names;
  int counter = 0;
  for (const ClaimRecord* c : claims) {
    std::vector<Figure>& out = figures[c->id];
    for (const PlotSpec& spec : c->plots) {
      // Plot ids should be unique; if two claims share one, the second gets the claim's id too
      // (it names both the SVG file and the figure's anchor).
      std::string name = spec.id;
      if (!used_names.insert(name).second) {
        name = c->id + "-" + spec.id;
        used_names.insert(name);
      }
      Figure f;
      f.id = name;
      f.title = spec.title;
      f.md_path = "plots/" + name + ".svg";
      if (!gnuplot_found) {
        f.problem = "gnuplot (\"" + options.gnuplot + "\") is not available";
      } else {
        const PlotResult drawn = draw_plot(spec, options.gnuplot);
        if (drawn.ok) {
          try {
            f.svg = inline_svg(drawn.svg, "p" + std::to_string(counter++) + "-", spec.title.empty() ? spec.id : spec.title);
            fs::create_directories(plots_dir);
            write_file_atomically((plots_dir / (name + ".svg")).string(), drawn.svg);
          } catch (const Error& e) {
            f.svg.clear();
            f.problem = e.what();
          }
        } else {
          f.problem = drawn.problem;
        }
      }
      (f.svg.empty() ? result.plots_failed : result.plots_drawn) += 1;
      out.push_back(std::move(f));
    }
  }
  return figures;
}

Document build_document(const Ledger& ledger, const std::vector<const ClaimRecord*>& claims,
                        const ClaimFigures& figures, const ReportOptions& options, bool gnuplot_found) {
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
        {strong("No plots: "), txt("gnuplot could not be run (program \"" + options.gnuplot +
                                   "\"). Install it (Debian: gnuplot-nox) and rerun "),
         code("scalelab report"), txt("; every measurement is in the tables below.")},
        "warning"});
  doc.blocks.push_back(Paragraph{{txt("Contents: "), link("the two questions", "#q-embedding"), txt(" · "),
                                  link("follow-up questions", "#follow-up"), txt(" · "),
                                  link("summary of verdicts", "#summary"), txt(" · "),
                                  link("claims", "#claims"), txt(" · "), link("sources", "#sources")},
                                 ""});

  for (Block& b : opening_blocks(ledger)) doc.blocks.push_back(std::move(b));
  for (Block& b : summary_blocks(ledger)) doc.blocks.push_back(std::move(b));
  doc.blocks.push_back(Heading{2, "claims", {txt("The claims, one by one")}});
  doc.blocks.push_back(Paragraph{
      {txt("Each section gives the claim, the experiment, the arms (with their full configs), the "
           "criterion that was fixed before the run, the measurements and the verdict computed from them.")},
      ""});
  for (const ClaimRecord* c : claims)
    for (Block& b : claim_section(*c, figures.at(c->id))) doc.blocks.push_back(std::move(b));
  for (Block& b : sources_blocks()) doc.blocks.push_back(std::move(b));
  return doc;
}

}  // namespace

ReportResult write_report(const std::string& dir, const ReportOptions& options) {
  SL_CHECK(!options.gnuplot.empty(), "the gnuplot program name is empty");
  const Ledger ledger = read_ledger(dir);
  const std::vector<const ClaimRecord*> claims = claims_in_order(ledger);

  ReportResult result;
  result.claims = static_cast<int>(claims.size());
  result.gnuplot_found = gnuplot_works(options.gnuplot);
  const fs::path root(dir);
  const ClaimFigures figures = draw_figures(claims, root / "plots", options, result.gnuplot_found, result);
  const Document doc = build_document(ledger, claims, figures, options, result.gnuplot_found);

  result.html_path = (root / "report.html").string();
  result.markdown_path = (root / "report.md").string();
  // Atomic (temp file + rename): a reader never sees a half-written report.
  write_file_atomically(result.html_path, render_html(doc));
  write_file_atomically(result.markdown_path, render_markdown(doc));
  return result;
}

}  // namespace scalelab::report
