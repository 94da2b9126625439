// model/presets: the anchors' combinations of scale, init, norm and position choices, by name.
// A preset is a [model] fragment applied beneath the user's config and --set overrides, so any of
// its values can be changed. Sources are cited in docs/presets.md.
#pragma once
#include <string>
#include <vector>

#include "scalelab/core/config_section.hpp"

namespace scalelab {

struct Preset {
  std::string name;
  std::string summary;  // one line: what the combination is
  std::string source;   // where it is read from (repository: file, or paper section)
  Json model;           // the [model] keys it sets
};

const std::vector<Preset>& presets();
// Throws Error naming the value and listing the allowed names.
const Preset& find_preset(const std::string& name);

}  // namespace scalelab
