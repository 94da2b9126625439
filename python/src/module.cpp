// _scalelab: the compiled half of the Python package (python/scalelab wraps it; docs/python.md).
#include <nanobind/nanobind.h>

#include "bindings.hpp"
#include "errors.hpp"

NB_MODULE(_scalelab, m) {
  m.doc() = "scalelab's engine, probes and ledger (use the scalelab package, not this module)";
  m.attr("__version__") = SCALELAB_VERSION;
  scalelab::python::register_error_translators();
  scalelab::python::bind_config(m);
  scalelab::python::bind_model(m);
  scalelab::python::bind_train(m);
  scalelab::python::bind_ledger(m);
  scalelab::python::bind_info(m);
}
