#include "scalelab/core/quote.hpp"

#include <cstdint>
#include <cstdio>

namespace scalelab {
namespace {

void append_hex_byte(std::string& out, unsigned char byte) {
  char buffer[8];
  std::snprintf(buffer, sizeof buffer, "\\x%02x", byte);
  out += buffer;
}

// The length of the valid UTF-8 sequence starting at data[i] and its code point, or 0 if the
// bytes there are not one (overlong forms, surrogates and values above U+10FFFF are invalid).
size_t utf8_sequence(std::string_view data, size_t i, uint32_t& code_point) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(data[k]); };
  const unsigned char lead = byte(i);
  size_t length;
  uint32_t minimum;
  if (lead >= 0xc2 && lead <= 0xdf) length = 2, minimum = 0x80, code_point = lead & 0x1f;
  else if (lead >= 0xe0 && lead <= 0xef) length = 3, minimum = 0x800, code_point = lead & 0x0f;
  else if (lead >= 0xf0 && lead <= 0xf4) length = 4, minimum = 0x10000, code_point = lead & 0x07;
  else return 0;
  if (i + length > data.size()) return 0;
  for (size_t k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xc0) != 0x80) return 0;
    code_point = (code_point << 6) | (byte(i + k) & 0x3f);
  }
  if (code_point < minimum || code_point > 0x10ffff) return 0;
  if (code_point >= 0xd800 && code_point <= 0xdfff) return 0;
  return length;
}

// Characters that are valid but would reorder, hide or break the message line.
bool unsafe_code_point(uint32_t c) {
  return (c >= 0x80 && c <= 0x9f)                   // C1 controls
         || c == 0xad                               // soft hyphen
         || (c >= 0x200b && c <= 0x200f)            // zero-width spaces and marks
         || (c >= 0x2028 && c <= 0x202e)            // line/paragraph separators, bidi embedding
         || (c >= 0x2060 && c <= 0x206f)            // invisible operators, bidi isolates
         || c == 0xfeff                             // byte order mark
         || (c >= 0xfff9 && c <= 0xfffb);           // interlinear annotation
}

}  // namespace

std::string quote_for_message(std::string_view data, size_t max_bytes) {
  std::string out = "'";
  size_t i = 0;
  while (i < data.size() && i < max_bytes) {
    const unsigned char c = static_cast<unsigned char>(data[i]);
    if (c < 0x80) {
      switch (c) {
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        case '\0': out += "\\0"; break;
        case '\\': out += "\\\\"; break;
        case '\'': out += "\\'"; break;
        default:
          if (c < 0x20 || c == 0x7f) append_hex_byte(out, c);
          else out += static_cast<char>(c);
      }
      ++i;
      continue;
    }
    uint32_t code_point = 0;
    const size_t length = utf8_sequence(data, i, code_point);
    if (length == 0) {
      append_hex_byte(out, c);
      ++i;
    } else if (unsafe_code_point(code_point)) {
      char buffer[16];
      std::snprintf(buffer, sizeof buffer, "\\u{%04x}", static_cast<unsigned>(code_point));
      out += buffer;
      i += length;
    } else {
      out.append(data.substr(i, length));
      i += length;
    }
  }
  if (i < data.size()) return out + "…' (" + std::to_string(data.size()) + " bytes)";
  return out + "'";
}

}  // namespace scalelab
