// report/svg_inline: a standalone SVG file made fit to paste into an HTML page.
#pragma once
#include <string>

namespace scalelab::report {

// Drops the XML prolog, doctype, comments and any <script>; replaces the <title> by `title`
// (escaped); prefixes every id, and every reference to one ("#id", "url(#id)"), with
// id_prefix so that many plots can share one page. Throws Error if there is no <svg> element.
std::string inline_svg(const std::string& svg, const std::string& id_prefix, const std::string& title);

}  // namespace scalelab::report
