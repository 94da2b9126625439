// scalelab baseline: the letter-context G2P baseline (data/g2p_baseline.hpp), the floor a trained
// model must beat, trained on a config's cmudict train words and scored on its valid or test words
// with the same WER / PER as `scalelab eval` (any-variant WER, PER to the closest reference).
#include <chrono>
#include <cstdio>
#include <iostream>

#include "commands.hpp"
#include "scalelab/core/error.hpp"
#include "scalelab/data/g2p_baseline.hpp"
#include "scalelab/data/task.hpp"
#include "scalelab/train/run_config.hpp"

namespace scalelab::cli {
namespace {

struct BaselineArgs {
  ConfigSources config;
  std::string split = "test";
  int context = 3;
};

void run_baseline(const BaselineArgs& a) {
  const RunConfig config = load_run_config(a.config);
  SL_CHECK(config.data.kind() == TaskKind::cmudict, "scalelab baseline needs data.task = \"cmudict\" (got \"",
           config.data.task, "\")");
  const auto start = std::chrono::steady_clock::now();
  const TaskData data = load_task(config.data);
  const G2pBaseline model = G2pBaseline::train(data.train_words, {.context = a.context});
  const auto& words = a.split == "valid" ? data.valid_words : data.test_words;
  const ErrorRates rates = evaluate_g2p_baseline(model, words);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("scalelab baseline: cmudict, data.split = %s, context %d, trained on %zu words "
              "(%ld pronunciations left unaligned)\n",
              config.data.split.c_str(), a.context, data.train_words.size(),
              static_cast<long>(model.unaligned_pronunciations()));
  std::printf("%s: %ld words, %ld wrong, WER %.2f %%; %ld edits / %ld phones, PER %.2f %% (%.1f s)\n",
              a.split.c_str(), static_cast<long>(rates.words), static_cast<long>(rates.wrong_words),
              100 * rates.wer(), static_cast<long>(rates.edits),
              static_cast<long>(rates.reference_tokens), 100 * rates.per(), seconds);
}

}  // namespace

void add_baseline(CLI::App& app) {
  auto a = std::make_shared<BaselineArgs>();
  CLI::App* cmd = app.add_subcommand(
      "baseline", "Train and score the letter-context G2P baseline on a cmudict config's split");
  cmd->add_option("--config,-c", a->config.path, "TOML config file (e.g. configs/g2p.toml)");
  cmd->add_option("--set", a->config.overrides,
                  "Override one value, section.key=value (repeatable), e.g. data.split=hash");
  cmd->add_option("--split", a->split, "Held-out side to score")
      ->check(CLI::IsMember({"valid", "test"}));
  cmd->add_option("--context", a->context, "Letters of context on each side (docs/data.md)")
      ->check(CLI::Range(0, 8));
  cmd->callback([a] { run_baseline(*a); });
}

}  // namespace scalelab::cli
