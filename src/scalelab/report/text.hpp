// report/text: escaping and number formatting shared by the renderers and the section builders.
//
// Everything a report shows comes from a ledger directory, which people pass around, so every
// string is untrusted. Each output language has exactly one escaping function here (HTML,
// Markdown, a message line); gnuplot's is gnuplot_string (report/gnuplot.hpp). Each takes any
// bytes: invalid UTF-8 becomes U+FFFD, so no output ever holds a broken sequence.
#pragma once
#include "scalelab/core/quote.hpp"
#include <cstddef>
#include <optional>
#include <string>

namespace scalelab::report {

// s with every invalid UTF-8 sequence (bad lead byte, truncated or overlong sequence, surrogate,
// beyond U+10FFFF) replaced by U+FFFD.
std::string valid_utf8(const std::string& s);

// &, <, >, " and ' as entities, control characters other than newline and tab as spaces, NUL
// dropped: safe in element content and in quoted attributes.
std::string escape_html(const std::string& s);

// Text for report.md, safe in Markdown inline text (paragraphs, list items, headings, GFM table
// cells) and inside the raw HTML the Markdown holds (<summary>, attributes): every character
// that CommonMark, GFM or HTML could read as syntax there becomes a numeric character reference
// (&#60; for <), which renders as the character itself and never as markup. Escaped: \ ` * ~ [ ]
// < > & | " $ @ everywhere; _ at a word's edge (d_model stays); the : of http://, mailto:, xmpp:
// and the . of www. (GFM autolinks); at the start # + - = (headings, lists, thematic breaks) and
// the . or ) of "12. " (ordered lists), the first of four leading blanks (indented code).
// Control characters (newline, CR, tab, NUL, ...) become spaces: a newline would end a paragraph,
// a table row or the raw HTML block of a <details>.
std::string escape_markdown(const std::string& s);

// A link target for report.md: every byte outside [A-Za-z0-9#._/-] percent-encoded, so it can
// neither close the (...) of the link nor name a scheme (":" is encoded: no javascript: link).
std::string markdown_href(const std::string& s);

// Messages quote what they read from files with scalelab::quote_for_message (core/quote.hpp).

// Four significant digits, no trailing zeros, exponent only outside [1e-3, 1e6); "n/a" for NaN,
// "inf" / "-inf" for infinities.
std::string format_number(double v);
std::string format_number(const std::optional<double>& v);

// First letter upper-cased (ASCII).
std::string capitalised(std::string s);

// Replaces every "{name}" in pattern by value.
std::string substitute(std::string pattern, const std::string& name, const std::string& value);

}  // namespace scalelab::report
