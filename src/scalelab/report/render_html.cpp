// The HTML rendering of a Document: one self-contained file (inline styles and SVG, no scripts,
// no external resources), readable on a phone and on a wide screen.
#include <cctype>
#include <sstream>

#include "scalelab/report/document.hpp"
#include "scalelab/report/text.hpp"

namespace scalelab::report {
namespace {

// System fonts only (nothing is fetched); one readable column; wide tables scroll inside their
// own box instead of widening the page.
constexpr const char* kStyle = R"(
:root { color-scheme: light; }
body { margin: 0; background: #fdfdfc; color: #1d1d1f;
  font: 16px/1.6 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
main { max-width: 48rem; margin: 0 auto; padding: 1.5rem 1.25rem 4rem; }
h1 { font-size: 1.9rem; line-height: 1.25; margin: 0.5rem 0 1rem; }
h2 { font-size: 1.4rem; line-height: 1.3; margin: 2.6rem 0 0.8rem; padding-top: 0.6rem;
  border-top: 1px solid #ddd; }
h3 { font-size: 1.1rem; line-height: 1.35; margin: 1.6rem 0 0.4rem; }
h4 { font-size: 1rem; margin: 1.2rem 0 0.3rem; color: #444; }
p, ul { margin: 0.5rem 0 0.9rem; }
li { margin: 0.2rem 0; }
a { color: #0b57a4; text-decoration-thickness: 1px; text-underline-offset: 2px; }
code, pre { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, "DejaVu Sans Mono", monospace;
  font-size: 0.88em; }
code { background: #f1f1ee; padding: 0.05em 0.3em; border-radius: 3px; overflow-wrap: anywhere; }
pre { background: #f6f6f3; padding: 0.8rem; overflow-x: auto; border-radius: 4px; line-height: 1.4; }
.scroll { overflow-x: auto; margin: 0.6rem 0 1rem; }
table { border-collapse: collapse; font-size: 0.9rem; min-width: 60%; }
th, td { border-bottom: 1px solid #e2e2de; padding: 0.3rem 0.6rem; text-align: left; vertical-align: top; }
th { background: #f3f3ef; font-weight: 600; white-space: nowrap; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
figure { margin: 1rem 0 1.4rem; }
/* A plot is drawn 640 units wide with 17-unit text (gnuplot.hpp): shown at most 640 px wide, its
   text is 17 px on a wide screen and still 10 px on a 420 px phone. */
figure svg { display: block; width: 100%; max-width: 640px; height: auto; background: #fff;
  border: 1px solid #e6e6e2; box-sizing: border-box; }
figcaption { font-size: 0.88rem; color: #555; margin-top: 0.3rem; }
details { margin: 0.3rem 0 0.6rem; }
summary { cursor: pointer; color: #0b57a4; }
@media (max-width: 40rem) {
  body { font-size: 15px; }
  main { padding: 1rem 0.9rem 3rem; }
  h1 { font-size: 1.5rem; }
  h2 { font-size: 1.25rem; }
  ul { padding-left: 1.2rem; }
  /* Narrow screens: keep columns readable and let the table scroll sideways instead. */
  td { min-width: 6.5rem; }
  td:first-child, td.num { min-width: 0; }
}
.note { background: #f2f6fb; border-left: 4px solid #7aa7d6; padding: 0.6rem 0.9rem; }
.warning { background: #fff5e6; border-left: 4px solid #e39b2d; padding: 0.6rem 0.9rem; }
.badge { display: inline-block; padding: 0 0.45em; border-radius: 0.6em; font-size: 0.85em; font-weight: 600; color: #fff; }
.badge-firm { background: #1b7837; } .badge-marginal { background: #b35806; } .badge-open { background: #5e5e5e; } .badge-provisional { background: #2166ac; }
details.evidence { margin: 0.8rem 0; } details.evidence > summary { cursor: pointer; font-weight: 600; }
/* The summary: the statement and the verdict keep a readable width (a long "holds only if"
   condition wraps to a few lines, not a word per line); the table scrolls inside its box. */
#summary-table th { white-space: normal; }
#summary-table td:nth-child(2) { min-width: 12rem; }
#summary-table td:nth-child(3) { min-width: 13rem; }
/* Scrolled sideways, each row keeps its claim ID in view. */
#summary-table th:first-child, #summary-table td:first-child { position: sticky; left: 0; background: #fdfdfc; }
#summary-table th:first-child { background: #f3f3ef; }
/* A wide screen shows all nine columns: the table's box is wider than the text column, centred. */
@media (min-width: 60rem) {
  #summary-table { width: min(calc(100vw - 4rem), 76rem); position: relative; left: 50%; transform: translateX(-50%); }
}
.answer { background: #eef7ee; border-left: 4px solid #3d8f5a; padding: 0.6rem 0.9rem; }
)";

// Offers a line break after '_', '/' and '.' inside long identifiers (file names, flags), so a
// table of them can stay narrow without breaking words at random letters.
std::string with_break_points(const std::string& escaped) {
  std::string out;
  for (size_t i = 0; i < escaped.size(); ++i) {
    out += escaped[i];
    const char c = escaped[i];
    const char next = i + 1 < escaped.size() ? escaped[i + 1] : ' ';
    const bool letter_follows = std::isalpha(static_cast<unsigned char>(next));  // not "0.5", "1/2"
    if ((c == '_' || c == '/' || c == '.') && letter_follows) out += "<wbr>";
  }
  return out;
}

void render_inline(std::ostringstream& out, const Inline& spans, bool break_words = false) {
  for (const Span& s : spans) {
    const std::string t = break_words ? with_break_points(escape_html(s.content)) : escape_html(s.content);
    switch (s.kind) {
      case Span::text: out << t; break;
      case Span::strong: out << "<strong>" << t << "</strong>"; break;
      case Span::emph: out << "<em>" << t << "</em>"; break;
      case Span::code: out << "<code>" << t << "</code>"; break;
      case Span::link: out << "<a href=\"" << escape_html(s.href) << "\">" << t << "</a>"; break;
      case Span::badge: out << "<span class=\"badge badge-" << t << "\">" << t << "</span>"; break;
    }
  }
}

struct BlockWriter {
  std::ostringstream& out;

  void operator()(const Heading& h) {
    out << "<h" << h.level;
    if (!h.anchor.empty()) out << " id=\"" << escape_html(h.anchor) << "\"";
    out << ">";
    render_inline(out, h.text);
    out << "</h" << h.level << ">\n";
  }
  void operator()(const Paragraph& p) {
    out << "<p";
    if (!p.style.empty()) out << " class=\"" << escape_html(p.style) << "\"";
    out << ">";
    render_inline(out, p.text);
    out << "</p>\n";
  }
  void operator()(const List& l) {
    out << "<ul>\n";
    for (const Inline& item : l.items) {
      out << "<li>";
      render_inline(out, item);
      out << "</li>\n";
    }
    out << "</ul>\n";
  }
  void operator()(const Table& t) {
    auto cls = [&](size_t c) {
      return c < t.numeric.size() && t.numeric[c] ? std::string(" class=\"num\"") : std::string();
    };
    out << "<div class=\"scroll\"";
    if (!t.id.empty()) out << " id=\"" << escape_html(t.id) << "\"";
    out << "><table>\n<thead><tr>";
    for (size_t c = 0; c < t.header.size(); ++c)
      out << "<th" << cls(c) << ">" << escape_html(t.header[c]) << "</th>";
    out << "</tr></thead>\n<tbody>\n";
    for (const auto& row : t.rows) {
      out << "<tr>";
      for (size_t c = 0; c < row.size(); ++c) {
        out << "<td" << cls(c) << ">";
        render_inline(out, row[c], t.wrap_words);
        out << "</td>";
      }
      out << "</tr>\n";
    }
    out << "</tbody></table></div>\n";
  }
  void operator()(const Details& d) {
    out << "<details><summary>" << escape_html(d.summary) << "</summary>\n<pre><code>"
        << escape_html(d.body) << "</code></pre></details>\n";
  }
  void operator()(const FoldBegin& f) {
    out << "<details class=\"evidence\"><summary>" << escape_html(f.summary) << "</summary>\n";
  }
  void operator()(const FoldEnd&) { out << "</details>\n"; }
  void operator()(const Figure& f) {
    out << "<figure id=\"plot-" << escape_html(f.id) << "\">\n";
    if (!f.svg.empty())
      out << f.svg << "\n";
    else
      out << "<p class=\"warning\">Plot " << escape_html(f.id) << " was not drawn: "
          << escape_html(f.problem) << "</p>\n";
    out << "<figcaption>" << escape_html(f.title.empty() ? f.id : f.title) << "</figcaption>\n</figure>\n";
  }
};

}  // namespace

std::string render_html(const Document& doc) {
  std::ostringstream out;
  out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      << "<title>" << escape_html(doc.title) << "</title>\n<style>" << kStyle << "</style>\n"
      << "</head>\n<body>\n<main>\n";
  BlockWriter writer{out};
  for (const Block& b : doc.blocks) std::visit(writer, b);
  out << "</main>\n</body>\n</html>\n";
  return out.str();
}

}  // namespace scalelab::report
