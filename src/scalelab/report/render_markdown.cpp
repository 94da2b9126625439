// The Markdown rendering of a Document (GitHub-flavoured): the same text as the HTML, with the
// plots as SVG files beside it.
#include <sstream>

#include "scalelab/report/document.hpp"
#include "scalelab/report/text.hpp"

namespace scalelab::report {
namespace {

std::string code_span(const std::string& s) {
  // A span holding backticks needs a longer fence and padding.
  const std::string fence = s.find('`') == std::string::npos ? "`" : "``";
  const std::string pad = fence.size() > 1 ? " " : "";
  std::string flat = s;
  for (char& c : flat)
    if (c == '\n') c = ' ';
  return fence + pad + flat + pad + fence;
}

std::string render_inline(const Inline& spans, bool in_table = false) {
  std::string out;
  for (const Span& s : spans) {
    const std::string t = escape_markdown(s.content);
    switch (s.kind) {
      case Span::text: out += t; break;
      case Span::strong: out += "**" + t + "**"; break;
      case Span::emph: out += "*" + t + "*"; break;
      case Span::code: {
        std::string c = code_span(s.content);
        if (in_table) {  // a pipe ends a GFM cell even inside a code span
          std::string escaped;
          for (char ch : c) escaped += ch == '|' ? std::string("\\|") : std::string(1, ch);
          c = escaped;
        }
        out += c;
        break;
      }
      case Span::link: out += "[" + t + "](" + s.href + ")"; break;
    }
  }
  return out;
}

struct BlockWriter {
  std::ostringstream& out;

  void operator()(const Heading& h) {
    if (!h.anchor.empty()) out << "<a id=\"" << escape_html(h.anchor) << "\"></a>\n\n";
    out << std::string(static_cast<size_t>(h.level), '#') << " " << render_inline(h.text) << "\n\n";
  }
  void operator()(const Paragraph& p) {
    if (p.style.empty())
      out << render_inline(p.text) << "\n\n";
    else
      out << "> " << render_inline(p.text) << "\n\n";
  }
  void operator()(const List& l) {
    for (const Inline& item : l.items) out << "- " << render_inline(item) << "\n";
    out << "\n";
  }
  void operator()(const Table& t) {
    out << "|";
    for (const std::string& h : t.header) out << " " << escape_markdown(h) << " |";
    out << "\n|";
    for (size_t c = 0; c < t.header.size(); ++c)
      out << (c < t.numeric.size() && t.numeric[c] ? "---:|" : "---|");
    out << "\n";
    for (const auto& row : t.rows) {
      out << "|";
      for (const Inline& cell : row) out << " " << render_inline(cell, true) << " |";
      out << "\n";
    }
    out << "\n";
  }
  void operator()(const Details& d) {
    out << "<details><summary>" << escape_html(d.summary) << "</summary>\n\n```json\n"
        << d.body << "\n```\n\n</details>\n\n";
  }
  void operator()(const Figure& f) {
    const std::string title = escape_markdown(f.title.empty() ? f.id : f.title);
    if (!f.svg.empty())
      out << "![" << title << "](" << f.md_path << ")\n\n";
    else
      out << "> Plot " << escape_markdown(f.id) << " was not drawn: " << escape_markdown(f.problem) << "\n\n";
  }
};

}  // namespace

std::string render_markdown(const Document& doc) {
  std::ostringstream out;
  BlockWriter writer{out};
  for (const Block& b : doc.blocks) std::visit(writer, b);
  return out.str();
}

}  // namespace scalelab::report
