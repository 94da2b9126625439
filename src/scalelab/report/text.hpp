// report/text: escaping and number formatting shared by the renderers and the section builders.
#pragma once
#include <optional>
#include <string>

namespace scalelab::report {

// &, <, >, " and ' as entities: safe in element content and in quoted attributes.
std::string escape_html(const std::string& s);
// Backslash before every character Markdown (CommonMark + GFM tables) would read as syntax.
std::string escape_markdown(const std::string& s);

// Four significant digits, no trailing zeros, exponent only outside [1e-3, 1e6); "n/a" for NaN,
// "inf" / "-inf" for infinities.
std::string format_number(double v);
std::string format_number(const std::optional<double>& v);

// First letter upper-cased (ASCII).
std::string capitalised(std::string s);

// Replaces every "{name}" in pattern by value.
std::string substitute(std::string pattern, const std::string& name, const std::string& value);

}  // namespace scalelab::report
