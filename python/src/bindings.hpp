// The parts of the _scalelab extension module, one file each (python/src/bind_*.cpp).
#pragma once
#include <nanobind/nanobind.h>

#include <string>

#include "scalelab/train/run_config.hpp"

namespace scalelab::python {

// Validates a config tree given as JSON text (ValueError with the CLI's message).
RunConfig parse_config_text(const std::string& tree_json);

void bind_config(nanobind::module_& m);
void bind_model(nanobind::module_& m);
void bind_train(nanobind::module_& m);
void bind_ledger(nanobind::module_& m);
void bind_info(nanobind::module_& m);

}  // namespace scalelab::python
