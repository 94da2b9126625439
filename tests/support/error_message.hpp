// tests/support/error_message: the message of the scalelab::Error a call throws, for asserting
// that bad input is refused with one line naming the problem.
//
//   EXPECT_THAT(error_of([&] { read_safetensors(p); }), HasSubstr("overlap"));
// Returns "(no error)" when nothing is thrown, so the assertion fails with a readable message;
// an exception of another type escapes and fails the test (raw library messages must not leak).
#pragma once
#include <string>

#include "scalelab/core/error.hpp"

namespace scalelab::test {

template <class F>
std::string error_of(F&& call) {
  try {
    call();
  } catch (const Error& e) {
    const std::string what = e.what();
    // One line: the CLI prints it after "scalelab: error: ".
    return what.find('\n') == std::string::npos ? what : "(multi-line) " + what;
  }
  return "(no error)";
}

}  // namespace scalelab::test
