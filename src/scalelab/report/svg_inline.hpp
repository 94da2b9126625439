// report/svg_inline: a standalone SVG file made fit to paste into an HTML page.
#pragma once
#include <string>

namespace scalelab::report {

// The <svg> element of an SVG file, rebuilt tag by tag so that nothing in it can run or fetch:
// only the drawing elements gnuplot writes are kept (script, style, foreignObject, a, image,
// animate, set and any unknown element are dropped with their content); comments, CDATA, the XML
// prolog and doctype are dropped; so are event-handler attributes (on*), href / xlink:href / src
// that do not point inside the document ('#...': no javascript:, data: or external URL), and
// attributes with a url(...) other than url(#...). The <title> is replaced by `title` (escaped);
// every id, and every reference to one ("#id", "url(#id)"), gets id_prefix so that many plots
// can share one page. Invalid UTF-8 becomes U+FFFD. Throws Error if there is no <svg> element.
std::string inline_svg(const std::string& svg, const std::string& id_prefix, const std::string& title);

}  // namespace scalelab::report
