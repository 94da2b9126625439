// core/quote: user data (a word, a field, a path, a prompt) made safe to print inside an error
// message or a warning line. Every place that echoes bytes it read from the user goes through
// quote_for_message, so no message can move the cursor, change the terminal's colours, be cut
// by a NUL, break a line, or grow to megabytes.
//
//   quote_for_message("caf\xc3\xa9")   -> 'café'           (valid UTF-8 letters kept)
//   quote_for_message("a\x1b[31m")       -> 'a\x1b[31m'       (control bytes as \xNN; \n \t \r \0)
//   quote_for_message("\xff")            -> '\xff'            (each invalid UTF-8 byte as \xNN)
//   quote_for_message("it's")            -> 'it\'s'           (the quote and \ escaped)
//   quote_for_message(9 MB of 'x')       -> 'xxx…' (9437184 bytes)
// Unicode format and control characters (C1 controls, bidirectional overrides, line and
// paragraph separators, BOM) are written \u{XXXX}: they would reorder or break the line.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

namespace scalelab {

// Bytes of `data` shown at most (then "…" and the full length in bytes).
inline constexpr size_t kQuotedMessageBytes = 120;

// `data` between single quotes, escaped as above, cut after `max_bytes` bytes of input.
std::string quote_for_message(std::string_view data, size_t max_bytes = kQuotedMessageBytes);

}  // namespace scalelab
