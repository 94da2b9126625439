// scalelab presets: the anchors' combinations, and the [model] values each one sets.
#include <iostream>

#include "commands.hpp"
#include "scalelab/model/presets.hpp"
#include "scalelab/train/run_config.hpp"

namespace scalelab::cli {

void add_presets(CLI::App& app) {
  auto name = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand(
      "presets", "List the presets (each anchor's scale, init, norm and position choices), or show one");
  cmd->add_option("name", *name, "show this preset's [model] values as TOML");
  cmd->callback([name] {
    if (!name->empty()) {
      const Preset& p = find_preset(*name);
      std::cout << "# " << p.name << ": " << p.summary << "\n# source: " << p.source << "\n"
                << json_to_toml(Json{{"model", p.model}});
      return;
    }
    for (const Preset& p : presets()) std::cout << p.name << "\n    " << p.summary << "\n    source: " << p.source << "\n";
  });
}

}  // namespace scalelab::cli
