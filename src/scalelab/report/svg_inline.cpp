#include "scalelab/report/svg_inline.hpp"

#include <cctype>
#include <set>
#include <vector>

#include "scalelab/core/error.hpp"
#include "scalelab/report/text.hpp"

namespace scalelab::report {
namespace {

// The elements gnuplot's svg terminal writes (and a few plain shapes). Anything else (script,
// style, foreignObject, a, image, animate, set, iframe, ...) is dropped with all its content:
// an allow-list, so an element this code has never heard of cannot slip through.
const std::set<std::string>& allowed_elements() {
  static const std::set<std::string> names = {
      "svg",      "g",        "defs",     "path",          "rect",          "circle",   "ellipse",
      "line",     "polyline", "polygon",  "text",          "tspan",         "use",      "clipPath",
      "filter",   "feFlood",  "feComposite", "feOffset",   "feGaussianBlur", "feMerge", "feMergeNode",
      "linearGradient", "radialGradient", "stop", "symbol", "marker",        "pattern"};
  return names;
}

bool name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == ':' || c == '-' || c == '_' || c == '.';
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

struct Attribute {
  std::string name;
  std::string value;
  bool has_value = false;
};

struct Tag {
  bool closing = false;       // </name>
  bool self_closing = false;  // <name ... />
  std::string name;
  std::vector<Attribute> attributes;
  size_t end = std::string::npos;  // one past its '>' (npos: the tag never ends)
};

// Parses the tag starting at s[at] == '<' (not a comment, CDATA or declaration).
Tag parse_tag(const std::string& s, size_t at) {
  Tag t;
  size_t i = at + 1;
  if (i < s.size() && s[i] == '/') {
    t.closing = true;
    ++i;
  }
  while (i < s.size() && name_char(s[i])) t.name += s[i++];
  while (i < s.size()) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    if (i >= s.size()) break;
    if (s[i] == '>') {
      t.end = i + 1;
      return t;
    }
    if (s[i] == '/') {
      t.self_closing = true;
      ++i;
      continue;
    }
    Attribute a;
    while (i < s.size() && !std::isspace(static_cast<unsigned char>(s[i])) && s[i] != '=' && s[i] != '>' &&
           s[i] != '/')
      a.name += s[i++];
    if (a.name.empty()) {  // a stray character ('"', '<', ...): skip it
      ++i;
      continue;
    }
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    if (i < s.size() && s[i] == '=') {
      a.has_value = true;
      ++i;
      while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
      if (i < s.size() && (s[i] == '"' || s[i] == '\'')) {
        const char quote = s[i++];
        const size_t close = s.find(quote, i);
        if (close == std::string::npos) return t;  // unterminated: the tag never ends
        a.value = s.substr(i, close - i);
        i = close + 1;
      } else {
        while (i < s.size() && !std::isspace(static_cast<unsigned char>(s[i])) && s[i] != '>') a.value += s[i++];
      }
    }
    t.attributes.push_back(std::move(a));
  }
  return t;
}

// Rewrites every url(#x) to url(#<prefix>x); false if the value holds any other url(...), a
// reference outside the page.
bool prefix_urls(std::string& value, const std::string& prefix) {
  const std::string marker = "url(";
  std::string out;
  size_t from = 0;
  for (size_t at = lower(value).find(marker); at != std::string::npos; at = lower(value).find(marker, at + 1)) {
    const size_t v = at + marker.size();
    if (v >= value.size() || value[v] != '#') return false;  // url('#x') too: gnuplot writes url(#x)
    out.append(value, from, v + 1 - from);
    out += prefix;
    from = v + 1;
  }
  out.append(value, from, std::string::npos);
  value = out;
  return true;
}

// The attribute made safe and page-unique, or false to drop it: event handlers (on*), references
// that leave the document (href / src not starting with '#': javascript:, data:, http:, a file),
// url(...) of anything but a fragment.
bool keep_attribute(Attribute& a, const std::string& prefix) {
  if (!a.has_value) return false;
  for (char c : a.name)
    if (!name_char(c)) return false;  // x"onload and the like: not a name an SVG attribute has
  const std::string name = lower(a.name);
  if (name.rfind("on", 0) == 0) return false;
  if (name == "href" || name == "xlink:href" || name == "src") {
    if (a.value.empty() || a.value[0] != '#') return false;
    a.value = "#" + prefix + a.value.substr(1);
    return true;
  }
  if (name == "id") a.value = prefix + a.value;
  return prefix_urls(a.value, prefix);
}

std::string attribute_text(const Attribute& a) {
  std::string v;
  for (char c : a.value) {
    if (c == '"') v += "&quot;";
    else if (c == '<') v += "&lt;";
    else if (c == '>') v += "&gt;";
    else v += c;
  }
  return " " + a.name + "=\"" + v + "\"";
}

// Every tag rebuilt from its parsed parts (so nothing unparsed is copied), disallowed elements
// dropped with their content, comments, CDATA, declarations and processing instructions dropped.
std::string sanitise(const std::string& s, const std::string& prefix) {
  std::string out;
  out.reserve(s.size() + 1024);
  std::string skipping;  // the disallowed element being dropped, "" if none
  int depth = 0;         // nesting of that element's name inside itself
  size_t pos = 0;
  while (pos < s.size()) {
    const size_t lt = s.find('<', pos);
    if (skipping.empty()) out.append(s, pos, lt == std::string::npos ? std::string::npos : lt - pos);
    if (lt == std::string::npos) break;
    const auto skip_past = [&](const char* close) {
      const size_t e = s.find(close, lt);
      return e == std::string::npos ? s.size() : e + std::char_traits<char>::length(close);
    };
    if (s.compare(lt, 4, "<!--") == 0) {
      pos = skip_past("-->");
      continue;
    }
    if (s.compare(lt, 9, "<![CDATA[") == 0) {
      pos = skip_past("]]>");
      continue;
    }
    if (s.compare(lt, 2, "<!") == 0 || s.compare(lt, 2, "<?") == 0) {
      pos = skip_past(">");
      continue;
    }
    Tag tag = parse_tag(s, lt);
    if (tag.end == std::string::npos) break;  // an unterminated tag: the rest is dropped
    pos = tag.end;
    if (tag.name.empty()) continue;  // "< " or "</>": not a tag; dropped
    if (!skipping.empty()) {
      if (tag.name == skipping && !tag.self_closing) depth += tag.closing ? -1 : 1;
      if (depth == 0) skipping.clear();
      continue;
    }
    if (!allowed_elements().count(tag.name)) {
      if (!tag.closing && !tag.self_closing) {
        skipping = tag.name;
        depth = 1;
      }
      continue;
    }
    if (tag.closing) {
      out += "</" + tag.name + ">";
      continue;
    }
    out += "<" + tag.name;
    for (Attribute& a : tag.attributes)
      if (keep_attribute(a, prefix)) out += attribute_text(a);
    out += tag.self_closing ? "/>" : ">";
  }
  // Cut short (an unterminated tag or dropped element): close the root so the page after it
  // is not read as SVG.
  if (out.size() < 6 || out.compare(out.size() - 6, 6, "</svg>") != 0) out += "</svg>";
  return out;
}

}  // namespace

std::string inline_svg(const std::string& svg, const std::string& id_prefix, const std::string& title) {
  const size_t start = svg.find("<svg");
  const size_t end = svg.rfind("</svg>");
  SL_CHECK(start != std::string::npos && end != std::string::npos && end > start,
           "not an SVG document (no <svg>...</svg> element): ", scalelab::quote_for_message(svg.substr(0, 60)));
  std::string s = sanitise(valid_utf8(svg.substr(start, end + 6 - start)), id_prefix);
  SL_CHECK(s.rfind("<svg", 0) == 0 && s.find('>') != std::string::npos,
           "not an SVG document (its <svg> tag does not parse)");
  // The accessible name goes right after the opening tag.
  const size_t open_end = s.find('>');
  s.insert(open_end + 1, "\n<title>" + escape_html(title) + "</title>");
  s.insert(4, " role=\"img\"");
  return s;
}

}  // namespace scalelab::report
