// The Markdown rendering of a Document (GitHub-flavoured): the same text as the HTML, with the
// plots as SVG files beside it.
#include <algorithm>
#include <sstream>

#include "scalelab/report/document.hpp"
#include "scalelab/report/text.hpp"

namespace scalelab::report {
namespace {

// Every data string goes through escape_markdown (report/text.hpp), including code: a code span
// is written as <code>…</code>, where the escaped text renders as is (a backtick fence would show
// the references literally, and a pipe in it would still end a GFM table cell).
std::string render_inline(const Inline& spans) {
  std::string out;
  for (const Span& s : spans) {
    const std::string t = escape_markdown(s.content);
    switch (s.kind) {
      case Span::text: out += t; break;
      case Span::strong: out += "**" + t + "**"; break;
      case Span::emph: out += "*" + t + "*"; break;
      case Span::code: out += "<code>" + t + "</code>"; break;
      case Span::link: out += "[" + t + "](" + markdown_href(s.href) + ")"; break;
      case Span::badge: out += "**&#91;" + t + "&#93;**"; break;
    }
  }
  return out;
}

// A code fence longer than any run of backticks in the body, so no line of it can close the block.
std::string fence_for(const std::string& body) {
  size_t longest = 0, run = 0;
  for (char c : body) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  return std::string(std::max<size_t>(3, longest + 1), '`');
}

struct BlockWriter {
  std::ostringstream& out;

  void operator()(const Heading& h) {
    if (!h.anchor.empty()) out << "<a id=\"" << escape_markdown(h.anchor) << "\"></a>\n\n";
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
      for (const Inline& cell : row) out << " " << render_inline(cell) << " |";
      out << "\n";
    }
    out << "\n";
  }
  // The summary line is raw HTML: escape_markdown keeps it on one line (a newline would end the
  // HTML block and turn the rest into live Markdown) and its references decode inside HTML too.
  void operator()(const Details& d) {
    const std::string fence = fence_for(d.body);
    out << "<details><summary>" << escape_markdown(d.summary) << "</summary>\n\n" << fence << "json\n"
        << valid_utf8(d.body) << "\n" << fence << "\n\n</details>\n\n";
  }
  void operator()(const FoldBegin& f) { out << "<details><summary>" << escape_markdown(f.summary) << "</summary>\n\n"; }
  void operator()(const FoldEnd&) { out << "</details>\n\n"; }
  void operator()(const Figure& f) {
    const std::string title = escape_markdown(f.title.empty() ? f.id : f.title);
    if (!f.svg.empty())
      out << "![" << title << "](" << markdown_href(f.md_path) << ")\n\n";
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
