// Configs from Python: the JSON tree of a run config, passed as text. The Python Config class
// (python/scalelab/config.py) keeps the tree; these functions build, change and validate it with
// the same code as the command line's --config, --preset and --set.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "bindings.hpp"
#include "scalelab/model/presets.hpp"
#include "scalelab/train/run_config.hpp"

namespace nb = nanobind;

namespace scalelab::python {

RunConfig parse_config_text(const std::string& tree_json) {
  return parse_run_config(Json::parse(tree_json));
}

void bind_config(nb::module_& m) {
  // The tree stays in C++ from the overrides to the validation: a value such as inf has no JSON
  // text, so it must meet the validation (and its message) before the tree is written as JSON.
  // A validated tree holds finite numbers only, so its JSON text is exact.
  m.def(
      "build_config",
      [](const std::string& path, const std::string& preset, const std::vector<std::string>& overrides) {
        const Json tree = merge_config_sources({.path = path, .preset = preset, .overrides = overrides});
        parse_run_config(tree);
        return tree.dump();
      },
      nb::arg("path"), nb::arg("preset"), nb::arg("overrides"),
      "The validated config tree (JSON) of a TOML file (may be empty), a preset (may be empty) and "
      "section.key=value overrides, layered as `scalelab train --config --preset --set` does.");
  m.def(
      "set_values",
      [](const std::string& tree_json, const std::vector<std::string>& assignments) {
        Json tree = Json::parse(tree_json);
        for (const std::string& a : assignments) apply_override(tree, a);
        parse_run_config(tree);
        return tree.dump();
      },
      nb::arg("tree_json"), nb::arg("assignments"),
      "The validated tree with section.key=value overrides applied (each value read as TOML).");
  m.def(
      "resolve_config",
      [](const std::string& tree_json) { return run_config_to_json(parse_config_text(tree_json)).dump(); },
      nb::arg("tree_json"),
      "Validates a config tree and returns it resolved (every default filled in), as JSON.");
  m.def(
      "config_to_toml",
      [](const std::string& tree_json) {
        return json_to_toml(run_config_to_json(parse_config_text(tree_json)));
      },
      nb::arg("tree_json"), "The resolved config as TOML, as a run directory's config.toml.");
  m.def(
      "presets",
      [] {
        std::vector<std::vector<std::string>> out;
        for (const Preset& p : scalelab::presets()) out.push_back({p.name, p.summary, p.source});
        return out;
      },
      "Every preset as [name, summary, source].");
}

}  // namespace scalelab::python
