// The Python exceptions of scalelab's errors. Library code throws scalelab::Error with the line
// the command line prints after "scalelab: error: "; the module raises it as the built-in class
// a Python caller expects, chosen from what the message says went wrong:
//   FileNotFoundError  a file or directory to read is missing ("no such file", "does not exist")
//   FileExistsError    an output would replace something ("file exists", "already holds a run")
//   RuntimeError       training diverged, or another thread's call is in progress
//   ValueError         everything else: a config value, an argument, a malformed file
#pragma once
#include <nanobind/nanobind.h>

#include <stdexcept>
#include <string>

namespace scalelab::python {

// A refusal that is not about the input (a call made while another is running): RuntimeError.
class BusyError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The Python exception class for a scalelab::Error message (rules above).
PyObject* exception_class_for(const std::string& message);

// Registers the translator of scalelab::Error and BusyError with nanobind.
void register_error_translators();

}  // namespace scalelab::python
