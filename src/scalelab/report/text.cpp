#include "scalelab/report/text.hpp"

#include <cctype>
#include <cmath>
#include <cstdio>

namespace scalelab::report {

std::string escape_html(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string escape_markdown(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    if (std::string("\\`*_[]<>|#!").find(c) != std::string::npos) out += '\\';
    if (c == '\n') {
      out += ' ';  // a newline inside a paragraph or table cell would end it
      continue;
    }
    out += c;
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
