#include "scalelab/report/svg_inline.hpp"

#include "scalelab/core/error.hpp"
#include "scalelab/report/text.hpp"

namespace scalelab::report {
namespace {

// Removes every element from `open` to the end of the first `close` after it.
std::string remove_all(std::string s, const std::string& open, const std::string& close) {
  for (size_t at = s.find(open); at != std::string::npos; at = s.find(open, at)) {
    const size_t end = s.find(close, at);
    if (end == std::string::npos) {
      s.erase(at);
      break;
    }
    s.erase(at, end + close.size() - at);
  }
  return s;
}

// Inserts prefix after every occurrence of `marker` followed by a quote (' or ") and, when
// need_hash, a '#'. Used for id="…", href="#…".
std::string prefix_after(const std::string& s, const std::string& marker, bool need_hash,
                         const std::string& prefix) {
  std::string out;
  out.reserve(s.size() + 1024);
  size_t from = 0;
  for (size_t at = s.find(marker); at != std::string::npos; at = s.find(marker, at + 1)) {
    // Only whole attribute names: " id=" but not "grid=" or "data-id=".
    if (at > 0 && !(s[at - 1] == ' ' || s[at - 1] == '\t' || s[at - 1] == '\n' || s[at - 1] == ':'))
      continue;
    size_t v = at + marker.size();
    if (v >= s.size() || (s[v] != '"' && s[v] != '\'')) continue;
    ++v;
    if (need_hash) {
      if (v >= s.size() || s[v] != '#') continue;
      ++v;
    }
    out.append(s, from, v - from);
    out += prefix;
    from = v;
  }
  out.append(s, from, std::string::npos);
  return out;
}

std::string prefix_urls(const std::string& s, const std::string& prefix) {
  std::string out;
  size_t from = 0;
  const std::string marker = "url(#";
  for (size_t at = s.find(marker); at != std::string::npos; at = s.find(marker, at + 1)) {
    out.append(s, from, at + marker.size() - from);
    out += prefix;
    from = at + marker.size();
  }
  out.append(s, from, std::string::npos);
  return out;
}

}  // namespace

std::string inline_svg(const std::string& svg, const std::string& id_prefix, const std::string& title) {
  const size_t start = svg.find("<svg");
  const size_t end = svg.rfind("</svg>");
  SL_CHECK(start != std::string::npos && end != std::string::npos && end > start,
           "not an SVG document (no <svg>...</svg> element): ", svg.substr(0, 60));
  std::string s = svg.substr(start, end + 6 - start);
  s = remove_all(s, "<!--", "-->");
  s = remove_all(s, "<script", "</script>");
  s = remove_all(s, "<title>", "</title>");
  s = remove_all(s, "<desc>", "</desc>");
  s = prefix_after(s, "id=", false, id_prefix);
  s = prefix_after(s, "href=", true, id_prefix);
  s = prefix_urls(s, id_prefix);
  // The accessible name goes right after the opening tag.
  const size_t open_end = s.find('>');
  s.insert(open_end + 1, "\n<title>" + escape_html(title) + "</title>");
  s.insert(4, " role=\"img\"");
  return s;
}

}  // namespace scalelab::report
