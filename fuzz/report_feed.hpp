// fuzz/report_feed: the report's readers and writers fed raw bytes, with oracles for what the
// writers produce (docs/fuzzing.md, target `report`). Shared by fuzz/report_fuzz.cpp and
// tests/fuzz/fuzz_regressions_test.cpp; the contract is feed.hpp's (return, or scalelab::Error).
//
// One input is used twice:
// 1. as the SVG gnuplot wrote: inline_svg must keep nothing that runs or fetches (the HTML oracle
//    restricted to SVG elements);
// 2. as a claim file claims/<ID>.json, read through read_ledger as `scalelab report DIR` reads it
//    (a ledger.json listing that one claim is written beside it), rendered as report.html and
//    report.md (plots not drawn), and each of its plots written as a gnuplot script. Oracles: the
//    gnuplot text substitutes nothing and runs nothing; report.md holds no Markdown or HTML syntax
//    but the renderer's own; report.html no element or attribute but the renderer's own. A loop
//    that never ends (log axes of extreme values) is a libFuzzer timeout.
#pragma once
#include <algorithm>
#include <cctype>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <string_view>

#include "feed.hpp"
#include "scalelab/report/gnuplot.hpp"
#include "scalelab/report/ledger_files.hpp"
#include "scalelab/report/svg_inline.hpp"
#include "scalelab/report/write_report.hpp"

namespace scalelab::fuzz {

// Outside single-quoted strings (gnuplot's literal form) a script line holds only the template's
// own words: no backquote, no double quote, no @macro, no ! shell escape, no ; second command, no
// # comment, no backslash, no $ but a column number ($3), no system(); each string ends on its line;
// each line is set / unset / plot, and every plot source is a file in the data directory (a name
// starting with '<' would be a shell pipe).
inline void require_inert_gnuplot(const std::string& script, const std::string& data_dir) {
  std::istringstream in(script);
  std::string line;
  while (std::getline(in, line)) {
    require(line.rfind("set ", 0) == 0 || line.rfind("unset ", 0) == 0 || line.rfind("plot ", 0) == 0,
            "gnuplot: every line is a set, unset or plot command");
    bool quoted = false;
    std::string outside;  // the line with every string replaced by S
    std::string literal;
    std::vector<std::string> plot_sources;
    for (size_t i = 0; i < line.size(); ++i) {
      const char c = line[i];
      if (c == '\'') {
        if (quoted && i + 1 < line.size() && line[i + 1] == '\'') {
          literal += '\'';
          ++i;
          continue;
        }
        quoted = !quoted;
        if (quoted) {
          literal.clear();
        } else {
          // A plot source: the string right after "plot " or ", ".
          const bool source = line.rfind("plot ", 0) == 0 &&
                              (outside == "plot " || (outside.size() >= 2 && outside.compare(outside.size() - 2, 2, ", ") == 0));
          if (source) plot_sources.push_back(literal);
          outside += 'S';
        }
        continue;
      }
      if (quoted) {
        require(c != '\n' && c != '\0', "gnuplot: no line break or NUL inside a string");
        literal += c;
        continue;
      }
      require(std::string("`\"@!;#\\").find(c) == std::string::npos,
              "gnuplot: no backquote, double quote, @, !, ;, # or backslash outside a single-quoted string");
      if (c == '$') require(i + 1 < line.size() && std::isdigit(static_cast<unsigned char>(line[i + 1])), "gnuplot: $ only as a column number");
      outside += c;
    }
    require(!quoted, "gnuplot: every string ends on its line");
    require(outside.find("system") == std::string::npos, "gnuplot: no system() outside strings");
    for (const std::string& src : plot_sources)
      require(src.rfind(data_dir + "/", 0) == 0, "gnuplot: every plot source is a file in the data directory");
  }
}

inline const std::set<std::string>& svg_element_names() {
  static const std::set<std::string> names = {
      "svg", "g", "defs", "path", "rect", "circle", "ellipse", "line", "polyline", "polygon", "text", "tspan", "use",
      "clipPath", "filter", "feFlood", "feComposite", "feOffset", "feGaussianBlur", "feMerge", "feMergeNode",
      "linearGradient", "radialGradient", "stop", "symbol", "marker", "pattern", "title"};
  return names;
}

// Every tag is one of `allowed`, and all its attributes are name="value" pairs with no event
// handler (on*), no src, no href outside the page ('#...' only) and no url(...) but url(#...); the
// only text not checked is the content of <style> (constant CSS).
inline void require_inert_html(const std::string& html, const std::set<std::string>& allowed) {
  static const std::regex attribute(R"re(\s+([^\s="'<>/]+)="([^"]*)")re");
  static const std::regex bare_tag(R"(^</?[A-Za-z0-9]+\s*/?>$)");
  size_t pos = 0;
  while ((pos = html.find('<', pos)) != std::string::npos) {
    const size_t end = html.find('>', pos);
    require(end != std::string::npos, "html: every tag ends");
    const std::string tag = html.substr(pos, end + 1 - pos);
    pos = end + 1;
    if (tag == "<!DOCTYPE html>") continue;
    size_t n = tag[1] == '/' ? 2 : 1;
    std::string name;
    while (n < tag.size() && std::isalnum(static_cast<unsigned char>(tag[n]))) name += tag[n++];
    require(allowed.count(name) == 1, "html: only the renderer's own elements");
    for (auto it = std::sregex_iterator(tag.begin(), tag.end(), attribute); it != std::sregex_iterator(); ++it) {
      std::string attr = (*it)[1];
      const std::string value = (*it)[2];
      for (char& c : attr) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      require(attr.rfind("on", 0) != 0, "html: no event-handler attribute");
      require(attr != "src", "html: no src attribute");
      if (attr == "href" || attr == "xlink:href") require(!value.empty() && value[0] == '#', "html: every href points inside the page");
      for (size_t u = value.find("url("); u != std::string::npos; u = value.find("url(", u + 1))
        require(u + 4 < value.size() && value[u + 4] == '#', "html: every url() points inside the page");
    }
    require(std::regex_match(std::regex_replace(tag, attribute, ""), bare_tag),
            "html: a tag holds only its name and name=\"value\" attributes");
    if (name == "style" && tag[1] != '/') {
      pos = html.find("</style>", pos);
      require(pos != std::string::npos, "html: <style> ends");
    }
  }
}

inline const std::set<std::string>& page_element_names() {
  static const std::set<std::string> names = [] {
    std::set<std::string> n = {"html", "head", "meta", "title", "style", "body", "main", "h1", "h2", "h3", "h4",
                               "p", "a", "ul", "li", "div", "table", "thead", "tbody", "tr", "th", "td", "strong",
                               "em", "code", "details", "summary", "pre", "figure", "figcaption", "wbr", "span"};
    n.insert(svg_element_names().begin(), svg_element_names().end());
    return n;
  }();
  return names;
}

// report.md holds no syntax but the renderer's own: with its raw HTML (<a id="...">, <details>,
// <summary>, <code>), its links ([text](#anchor)), numeric character references, block markers
// (#, >, -, table pipes), emphasis stars and the fenced config blocks taken out, no character is
// left that Markdown or HTML could read as syntax (\ ` ~ [ ] < > & | " $ @, _ but inside a word,
// no autolink scheme or www.); no line starts with block syntax; table rows have their header's
// pipe count; every fence is closed by its own closing line.
inline void require_inert_markdown(const std::string& md) {
  static const std::regex tags(R"(<a id="[^"<>]*"></a>|</?(details|summary|code)>)");
  static const std::regex link(R"(\]\((#|plots/)[A-Za-z0-9#._/%-]*\))");
  static const std::regex reference("&#[0-9]+;");
  static const std::regex separator(R"(^\|(-{3}:?\|)+$)");
  static const std::regex ordered(R"(^[0-9]+[.)]( |$))");
  static const std::regex heading("^#{1,6} ");
  std::istringstream in(md);
  std::string line;
  size_t fence = 0;
  long header_pipes = -1;
  while (std::getline(in, line)) {
    if (fence) {
      if (line.size() >= fence && line.find_first_not_of('`') == std::string::npos) fence = 0;
      continue;
    }
    if (line.rfind("```", 0) == 0) {
      fence = line.find_first_not_of('`');
      require(line.substr(fence) == "json", "markdown: a fence opens only a config block");
      continue;
    }
    if (line.empty()) {
      header_pipes = -1;
      continue;
    }
    require(line[0] != ' ' && line[0] != '\t', "markdown: no line starts with white space");
    require(!std::regex_search(line, ordered), "markdown: no ordered-list marker");
    require(line.rfind("+ ", 0) != 0 && line.rfind("* ", 0) != 0 && line[0] != '=' && line.rfind("~~~", 0) != 0,
            "markdown: no list, setext or tilde-fence line");
    if (line[0] == '#') require(std::regex_search(line, heading), "markdown: # only as a heading marker");
    if (std::regex_search(line, separator)) continue;
    std::string t = std::regex_replace(line, tags, "");
    const auto links = static_cast<long>(std::distance(std::sregex_iterator(t.begin(), t.end(), link), std::sregex_iterator()));
    require(std::count(t.begin(), t.end(), '[') == links, "markdown: every [ opens one of the renderer's links");
    t = std::regex_replace(t, link, "");
    t.erase(std::remove(t.begin(), t.end(), '['), t.end());
    t = std::regex_replace(t, reference, "");
    if (t.rfind("> ", 0) == 0 || t.rfind("- ", 0) == 0) t = t.substr(2);
    if (line[0] == '#') t = t.substr(t.find(' ') + 1);
    if (line[0] == '|') {
      const long pipes = std::count(line.begin(), line.end(), '|');
      if (header_pipes < 0) header_pipes = pipes;
      require(pipes == header_pipes, "markdown: every table row has its header's cells");
      t.erase(std::remove(t.begin(), t.end(), '|'), t.end());
    }
    t.erase(std::remove(t.begin(), t.end(), '*'), t.end());
    require(t.find_first_of(std::string("\\`~[]<>&|\"$@\r\t\0", 15)) == std::string::npos,
            "markdown: no syntax character outside the renderer's own");
    for (size_t u = t.find('_'); u != std::string::npos; u = t.find('_', u + 1))
      require(u > 0 && u + 1 < t.size() && std::isalnum(static_cast<unsigned char>(t[u - 1])) &&
                  std::isalnum(static_cast<unsigned char>(t[u + 1])),
              "markdown: _ only inside a word");
    std::string folded = t;
    for (char& c : folded) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    for (const char* autolink : {"www.", "://", "mailto:", "xmpp:"})
      require(folded.find(autolink) == std::string::npos, "markdown: no autolink");
  }
  require(fence == 0, "markdown: every fence is closed");
}

// The input as gnuplot's SVG, then as a claim file (see the top of this file).
inline void feed_report(std::string_view bytes) {
  const std::string input(bytes);
  try {
    const std::string svg = report::inline_svg(input, "p0-", "t");
    std::set<std::string> allowed = svg_element_names();
    require_inert_html(svg, allowed);
  } catch (const Error&) {  // not an SVG document: the claim part still runs
  }

  const report::ClaimRecord claim = report::read_claim(scratch_file().set(bytes));
  const std::string& id = claim.id;
  // read_ledger refuses ids that are not letters and digits before it opens claims/<id>.json;
  // only such an id may become a file name here.
  if (id.empty() || id.size() > 16 || !std::all_of(id.begin(), id.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)); }))
    throw Error("claim id not a file name");
  const ScratchDir& dir = scratch_dir();
  std::filesystem::create_directories(dir.path() / "claims");
  for (const auto& e : std::filesystem::directory_iterator(dir.path() / "claims")) std::filesystem::remove(e.path());
  Json ledger = {{"schema", 1}, {"claims", Json::array({{{"id", id}, {"verdict", "holds"}}})}};
  dir.write("ledger.json", ledger.dump());
  dir.write("claims/" + id + ".json", bytes);
  const report::Ledger read = report::read_ledger(dir.path().string());

  const report::RenderedReport r = report::render_report(read, report::ReportOptions{}, false);
  require_inert_markdown(r.markdown);
  require_inert_html(r.html, page_element_names());
  for (const report::PlotSpec& spec : read.claims.at(id).plots)
    require_inert_gnuplot(report::gnuplot_script(spec, "/data", "/out/plot.svg"), "/data");
}

}  // namespace scalelab::fuzz
