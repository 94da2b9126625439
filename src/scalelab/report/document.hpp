// report/document: the report as a list of blocks, rendered once as HTML and once as Markdown so
// that the two files carry the same text.
#pragma once
#include <string>
#include <variant>
#include <vector>

namespace scalelab::report {

// A run of text. Text is stored raw; each renderer escapes it for its format.
struct Span {
  enum Kind { text, strong, emph, code, link, badge };  // badge: a one-word verdict strength
  Kind kind = text;
  std::string content;
  std::string href;  // for links: "#anchor"
};
using Inline = std::vector<Span>;

inline Span txt(std::string s) { return {Span::text, std::move(s), {}}; }
inline Span strong(std::string s) { return {Span::strong, std::move(s), {}}; }
inline Span emph(std::string s) { return {Span::emph, std::move(s), {}}; }
inline Span code(std::string s) { return {Span::code, std::move(s), {}}; }
inline Span link(std::string s, std::string href) { return {Span::link, std::move(s), std::move(href)}; }

struct Heading {
  int level = 2;
  std::string anchor;  // id attribute; empty for none
  Inline text;
};

struct Paragraph {
  Inline text;
  std::string style;  // "" | "note" (a boxed remark) | "warning" (something went wrong)
};

struct List {
  std::vector<Inline> items;
};

struct Table {
  std::vector<std::string> header;
  std::vector<bool> numeric;  // per column: right-aligned
  std::vector<std::vector<Inline>> rows;
  bool wrap_words = false;  // break long words (file names, flags) rather than widen the table
  std::string id;           // HTML id of the table's scroll box (styles aimed at one table); "" for none
};

// Collapsed preformatted text (a resolved config).
struct Details {
  std::string summary;
  std::string body;
};

// A plot: inline SVG in HTML, an image link in Markdown; or the reason it is missing.
struct Figure {
  std::string id;
  std::string title;
  std::string svg;       // ready to inline (prolog stripped, ids unique); empty if not drawn
  std::string md_path;   // relative path of the SVG file beside report.md
  std::string problem;   // why it was not drawn
};

// The blocks between a FoldBegin and its FoldEnd are folded away under `summary` (the evidence of
// a claim, below its answer). Folds do not nest.
struct FoldBegin {
  std::string summary;
};
struct FoldEnd {};

using Block = std::variant<Heading, Paragraph, List, Table, Details, Figure, FoldBegin, FoldEnd>;

struct Document {
  std::string title;
  std::vector<Block> blocks;
};

std::string render_html(const Document& doc);
std::string render_markdown(const Document& doc);

}  // namespace scalelab::report
