// core/error: the one exception type of scalelab.
//
// Library code never exits: it throws scalelab::Error with the offending values in the message,
// and the CLI turns it into one line on stderr and a non-zero exit status.
#pragma once
#include <sstream>
#include <stdexcept>
#include <string>

namespace scalelab {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

// Builds a message from any streamable parts: throw_error("d_model = ", d, " is not ...").
template <class... Parts>
[[noreturn]] void throw_error(const Parts&... parts) {
  std::ostringstream out;
  (out << ... << parts);
  throw Error(out.str());
}

// Checks an internal invariant or a caller's contract; the message names the values involved.
#define SL_CHECK(cond, ...)                                       \
  do {                                                            \
    if (!(cond)) ::scalelab::throw_error(__VA_ARGS__);            \
  } while (0)

}  // namespace scalelab
