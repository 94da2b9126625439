#include "errors.hpp"

#include "scalelab/core/error.hpp"

namespace scalelab::python {

namespace {
bool contains(const std::string& text, const char* part) { return text.find(part) != std::string::npos; }
}  // namespace

PyObject* exception_class_for(const std::string& message) {
  if (contains(message, "no such file") || contains(message, "No such file") ||
      contains(message, "does not exist"))
    return PyExc_FileNotFoundError;
  if (contains(message, "file exists") || contains(message, "already holds a run") ||
      contains(message, "never overwrites"))
    return PyExc_FileExistsError;
  if (contains(message, "diverged")) return PyExc_RuntimeError;
  return PyExc_ValueError;
}

void register_error_translators() {
  nanobind::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const BusyError& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    } catch (const Error& e) {
      PyErr_SetString(exception_class_for(e.what()), e.what());
    }
  });
}

}  // namespace scalelab::python
