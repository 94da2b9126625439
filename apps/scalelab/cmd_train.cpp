// scalelab train / init: build a model from a config, train it, or just write its initial weights.
#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>

#include "commands.hpp"
#include "stop_signals.hpp"
#include "output_file.hpp"
#include "scalelab/core/parallel.hpp"
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
    // Installed before anything is loaded: a signal during start-up (a slow data load on a busy
    // machine) then also ends with the checkpoint of the first step and its message, not a bare kill.
    const StopSignalHandlers handlers;
    Comm& comm = *world;
    const bool root = comm.rank() == 0;
    std::optional<RunConfig> config;
    std::optional<TaskData> data;
    agree_on_errors(comm, [&] {  // a bad config or data set ends every rank with rank 0's line
      config = load_run_config(*args);
      data = load_task(config->data);
    });
    // Ranks on one machine share its cores: without train.threads or OMP_NUM_THREADS each rank
    // takes its share, so that N ranks do not each start one OpenMP thread per core.
    if (comm.size() > 1 && config->train.threads == 0 && !std::getenv("OMP_NUM_THREADS")) {
      const int cores = num_threads();
      set_num_threads(std::max(1, cores / launcher_local_size()));
      if (root && !*quiet) {
        std::cerr << "scalelab train: " << comm.size() << " ranks, " << num_threads()
                  << " thread(s) each (" << cores << " cores / " << launcher_local_size()
                  << " ranks on this machine; set train.threads or OMP_NUM_THREADS to choose)\n";
      }
    }
    Trainer trainer(*config, *data);
    const TrainSummary s = trainer.run({.resume = *resume,
                                        .progress = *quiet || !root ? nullptr : &std::cerr,
                                        .stop_requested = &stop_signal,
                                        .comm = &comm});
    if (s.interrupted) {
      // The job's signal, also when another rank got it (every rank exits 128 + it).
      const int sig = s.stop_signal > 0 ? s.stop_signal : SIGTERM;
      exit_status = 128 + sig;
      if (!root) return;  // rank 0 reports for the job
      std::cerr << "scalelab: " << (sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "signal " + std::to_string(sig))
                << ": stopped after step " << s.steps << " of " << config->train.steps
                << (comm.size() > 1 && stop_signal == 0 ? " (sent to another rank)" : "")
                << ", checkpoint written to "
                << (std::filesystem::path(config->train.run_dir) / "checkpoint.safetensors").string()
                << " (continue with --resume)\n";
      return;
    }
    if (!root) return;  // rank 0 reports for the job
    std::cout << "trained " << s.steps << " steps in " << s.seconds << " s"
              << (s.ranks > 1 ? " on " + std::to_string(s.ranks) + " ranks" : "") << " ("
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
    check_output_file("--out", *out, *force);
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
