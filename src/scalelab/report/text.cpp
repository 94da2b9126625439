#include "scalelab/report/text.hpp"

#include <cctype>
#include <cmath>
#include <cstdio>

namespace scalelab::report {

namespace {

constexpr const char* kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// Length of the valid UTF-8 sequence starting at s[i] (1 for ASCII), 0 if the bytes there are not
// one (RFC 3629: no overlong forms, no surrogates, nothing beyond U+10FFFF).
size_t utf8_length(const std::string& s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  if (c < 0x80) return 1;
  size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (c >= 0xC2 && c <= 0xDF) n = 2;
  else if (c == 0xE0) n = 3, lo = 0xA0;
  else if (c >= 0xE1 && c <= 0xEC) n = 3;
  else if (c == 0xED) n = 3, hi = 0x9F;
  else if (c >= 0xEE && c <= 0xEF) n = 3;
  else if (c == 0xF0) n = 4, lo = 0x90;
  else if (c >= 0xF1 && c <= 0xF3) n = 4;
  else if (c == 0xF4) n = 4, hi = 0x8F;
  else return 0;
  if (i + n > s.size()) return 0;
  if (b(i + 1) < lo || b(i + 1) > hi) return 0;
  for (size_t k = 2; k < n; ++k)
    if (b(i + k) < 0x80 || b(i + k) > 0xBF) return 0;
  return n;
}

bool is_control(unsigned char c) { return c < 0x20 || c == 0x7F; }

std::string reference(unsigned char c) { return "&#" + std::to_string(c) + ";"; }

bool ascii_digit(char c) { return c >= '0' && c <= '9'; }

// s[i] ('.' or ')') after leading digits, followed by the end, a space or a control character
// (which becomes a space): "12. " or "3)" would open an ordered list; "1.5" would not.
bool list_marker_end(const std::string& s, size_t i, bool leading_digits) {
  if (!leading_digits || i == 0 || !ascii_digit(s[i - 1])) return false;
  return i + 1 == s.size() || s[i + 1] == ' ' || is_control(static_cast<unsigned char>(s[i + 1]));
}

}  // namespace

std::string valid_utf8(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const size_t n = utf8_length(s, i);
    if (n == 0) {
      out += kReplacement;
      ++i;
    } else {
      out.append(s, i, n);
      i += n;
    }
  }
  return out;
}

std::string escape_html(const std::string& raw) {
  const std::string s = valid_utf8(raw);
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      case '\0': break;
      case '\n':
      case '\t': out += c; break;
      default: out += is_control(static_cast<unsigned char>(c)) ? ' ' : c;
    }
  }
  return out;
}

std::string escape_markdown(const std::string& raw) {
  const std::string s = valid_utf8(raw);
  std::string out;
  out.reserve(s.size() + s.size() / 4);
  const auto alnum_at = [&](size_t k) { return k < s.size() && std::isalnum(static_cast<unsigned char>(s[k])); };
  const auto ends_with_word = [&](size_t i, const char* word) {  // s[..i) ends with word (any case)
    const size_t n = std::char_traits<char>::length(word);
    if (i < n) return false;
    for (size_t k = 0; k < n; ++k)
      if (std::tolower(static_cast<unsigned char>(s[i - n + k])) != word[k]) return false;
    return true;
  };
  // Four or more leading blanks would open an indented code block; fewer are ignored.
  size_t blanks = 0;
  while (blanks < s.size() && (s[blanks] == ' ' || is_control(static_cast<unsigned char>(s[blanks])))) ++blanks;
  // At the start of a block (a paragraph, a list item, a quoted line) # + - = open block syntax;
  // the string may be placed there, so its leading ones are escaped.
  bool at_start = true;        // only blanks so far
  bool leading_digits = true;  // only blanks and digits so far: "12." would be a list marker
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    const auto u = static_cast<unsigned char>(c);
    if (is_control(u) || c == ' ') {
      out += i == 0 && blanks >= 4 ? "&#32;" : " ";
      continue;
    }
    bool escape = false;
    switch (c) {
      case '\\': case '`': case '*': case '~': case '[': case ']': case '<': case '>': case '&': case '|':
      case '"': case '$': case '@':
        escape = true;
        break;
      case '_':  // emphasis only at a word's edge: d_model stays as it is
        escape = !(i > 0 && alnum_at(i - 1) && alnum_at(i + 1));
        break;
      case ':':  // the scheme of a GFM autolink (http://, mailto:, xmpp:)
        escape = s.compare(i + 1, 2, "//") == 0 || ends_with_word(i, "mailto") || ends_with_word(i, "xmpp");
        break;
      case '#': case '+': case '-': case '=':
        escape = at_start;
        break;
      case '.': {
        // "12. " opens an ordered list; "www." a GFM autolink.
        escape = list_marker_end(s, i, leading_digits) || ends_with_word(i, "www");
        break;
      }
      case ')':
        escape = list_marker_end(s, i, leading_digits);
        break;
      default:
        break;
    }
    out += escape ? reference(u) : std::string(1, c);
    at_start = false;
    if (!ascii_digit(c)) leading_digits = false;
  }
  return out;
}

std::string markdown_href(const std::string& s) {
  static const char* const hex = "0123456789ABCDEF";
  std::string out;
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || c == '#' || c == '.' || c == '_' || c == '/' || c == '-') {
      out += c;
    } else {
      out += '%';
      out += hex[u >> 4];
      out += hex[u & 15];
    }
  }
  return out;
}

std::string format_number(double v) {
  if (std::isnan(v)) return "n/a";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  const double a = std::fabs(v);
  char buf[64];
  if (a != 0 && (a < 1e-3 || a >= 1e6)) {
    std::snprintf(buf, sizeof buf, "%.3e", v);
    // 1.230e+05 -> 1.23e5
    std::string s(buf);
    const size_t e = s.find('e');
    std::string mant = s.substr(0, e), exp = s.substr(e + 1);
    while (mant.back() == '0') mant.pop_back();
    if (mant.back() == '.') mant.pop_back();
    const bool neg = exp[0] == '-';
    size_t k = 1;
    while (k + 1 < exp.size() && exp[k] == '0') ++k;
    return mant + "e" + (neg ? "-" : "") + exp.substr(k);
  }
  if (a >= 1e4) {
    std::snprintf(buf, sizeof buf, "%.0f", v);  // %g would switch to an exponent here
    return buf;
  }
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

std::string format_number(const std::optional<double>& v) { return v ? format_number(*v) : "–"; }

std::string capitalised(std::string s) {
  if (!s.empty()) s[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(s[0])));
  return s;
}

std::string substitute(std::string pattern, const std::string& name, const std::string& value) {
  const std::string key = "{" + name + "}";
  for (size_t at = pattern.find(key); at != std::string::npos; at = pattern.find(key, at + value.size()))
    pattern.replace(at, key.size(), value);
  return pattern;
}

}  // namespace scalelab::report
