// scalelab average: write the element-wise mean of several checkpoints of one model.
#include <filesystem>
#include <iostream>

#include "commands.hpp"
#include "scalelab/model/checkpoint_average.hpp"

namespace scalelab::cli {

namespace {
struct AverageArgs {
  std::vector<std::string> checkpoints;
  std::string out;
  bool force = false;
};

void check_output(const AverageArgs& a) {
  namespace fs = std::filesystem;
  if (!fs::exists(a.out)) return;
  for (const std::string& c : a.checkpoints) {
    std::error_code ec;
    SL_CHECK(!fs::equivalent(a.out, c, ec), "--out ", a.out,
             ": is one of the checkpoints being averaged (its optimizer state would be lost)");
  }
  SL_CHECK(a.force, "--out ", a.out, ": file exists (pass --force to overwrite)");
}
}  // namespace

void add_average(CLI::App& app) {
  auto a = std::make_shared<AverageArgs>();
  CLI::App* cmd = app.add_subcommand(
      "average",
      "Average the weights of several checkpoints of one model (e.g. a run's last few), for eval");
  cmd->add_option("checkpoints", a->checkpoints, "two or more checkpoints of the same model")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--out,-o", a->out, "checkpoint to write (.safetensors); no optimizer state")
      ->required();
  cmd->add_flag("--force", a->force, "overwrite --out if it exists");
  cmd->footer(
      "The mean is taken element-wise over the model parameters, in double. The output keeps the\n"
      "newest source's config and step and lists its sources in the metadata key averaged_from.\n"
      "Example: scalelab average runs/g2p/snapshots/step{25000,27500}.safetensors "
      "-o avg.safetensors");
  cmd->callback([a] {
    check_output(*a);
    AveragedCheckpoint averaged = average_checkpoints(a->checkpoints);
    save_averaged_checkpoint(a->out, averaged);
    std::cout << "wrote " << a->out << ": the mean of " << averaged.sources.size()
              << " checkpoints (steps";
    for (int64_t s : averaged.source_steps) std::cout << " " << s;
    std::cout << ")\n";
  });
}

}  // namespace scalelab::cli
