// scalelab train / init: build a model from a config, train it, or just write its initial weights.
#include <filesystem>
#include <iostream>

#include "commands.hpp"
#include "scalelab/model/checkpoint.hpp"
#include "scalelab/train/trainer.hpp"

namespace scalelab::cli {

namespace {
void add_config_options(CLI::App* cmd, ConfigSources& args) {
  cmd->add_option("--config,-c", args.path, "TOML config file (configs/*.toml)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--preset,-p", args.preset,
                  "start [model] from a preset (scalelab presets lists them); the config and --set win");
  cmd->add_option("--set", args.overrides,
                  "override a config value: section.key=value (repeatable), e.g. model.d_model=256");
}
}  // namespace

void add_train(CLI::App& app) {
  auto args = std::make_shared<ConfigSources>();
  auto resume = std::make_shared<bool>(false);
  auto quiet = std::make_shared<bool>(false);
  CLI::App* cmd = app.add_subcommand(
      "train", "Train a model; writes config, metrics.jsonl, checkpoint and summary to train.run_dir");
  add_config_options(cmd, *args);
  cmd->add_flag("--resume", *resume, "continue from run_dir/checkpoint.safetensors");
  cmd->add_flag("--quiet,-q", *quiet, "no progress lines");
  cmd->callback([args, resume, quiet] {
    const RunConfig config = load_run_config(*args);
    const TaskData data = load_task(config.data);
    Trainer trainer(config, data);
    const TrainSummary s = trainer.run({.resume = *resume, .progress = *quiet ? nullptr : &std::cerr});
    std::cout << "trained " << s.steps << " steps in " << s.seconds << " s ("
              << static_cast<int64_t>(s.tokens_per_second) << " target tokens/s): valid loss "
              << s.valid.nll << " nats, token accuracy " << s.valid.token_accuracy;
    if (s.valid.exact_match >= 0) std::cout << ", exact match " << s.valid.exact_match;
    std::cout << "\n";
  });
}

void add_init(CLI::App& app) {
  auto args = std::make_shared<ConfigSources>();
  auto out = std::make_shared<std::string>();
  auto force = std::make_shared<bool>(false);
  CLI::App* cmd = app.add_subcommand(
      "init", "Write a model's initial weights (step 0) as a checkpoint, without training");
  add_config_options(cmd, *args);
  cmd->add_option("--out,-o", *out, "checkpoint to write (.safetensors)")->required();
  cmd->add_flag("--force", *force, "overwrite --out if it exists");
  cmd->callback([args, out, force] {
    SL_CHECK(*force || !std::filesystem::exists(*out), "--out ", *out,
             ": file exists (pass --force to overwrite)");
    RunConfig config = load_run_config(*args);
    if (config.model.tgt_vocab == 0 || (config.model.arch == Architecture::encoder_decoder &&
                                        config.model.src_vocab == 0)) {
      config.model = resolve_vocab(config.model, load_task(config.data));
    }
    Transformer<float> model(config.model);
    save_checkpoint(*out, model, run_config_to_json(config), 0);
    std::cout << "wrote " << *out << " (" << model.parameter_count() << " parameters)\n";
  });
}

}  // namespace scalelab::cli
