// scalelab sample: generate text from a character LM checkpoint (data.task = kjv).
#include <iostream>

#include "commands.hpp"
#include "loaded_run.hpp"
#include "scalelab/core/error.hpp"
#include "scalelab/core/quote.hpp"
#include "scalelab/data/text_lm.hpp"
#include "scalelab/train/sampling.hpp"

namespace scalelab::cli {

namespace {

struct SampleArgs {
  std::string checkpoint;
  std::string prompt = "And it came to pass";
  double temperature = 0.8;
  int64_t length = 300;
  uint64_t seed = 1;
  bool no_cache = false;
};

void run_sample(const SampleArgs& a) {
  LoadedRun run = load_run(a.checkpoint);
  SL_CHECK(run.config.data.kind() == TaskKind::kjv, a.checkpoint, ": data.task = ",
           run.config.data.task, ", not a language model (kjv) checkpoint");
  SL_CHECK(!a.prompt.empty(), "--prompt must not be empty");
  const Vocab& vocab = run.data.tgt_vocab;
  std::string unknown;
  for (char c : a.prompt)
    if (!vocab.contains(std::string(1, c)) && unknown.find(c) == std::string::npos) unknown += c;
  SL_CHECK(unknown.empty(), "the prompt holds characters the model never saw: ", quote_for_message(unknown),
           " (the KJV has letters, space, newline and ! ' ( ) , - . : ; ?)");
  const auto ids = sample_tokens(*run.model, encode_chars(a.prompt, vocab),
                                 {.length = a.length, .temperature = a.temperature,
                                  .seed = a.seed, .context = run.config.data.context,
                                  .use_cache = !a.no_cache});
  std::cout << a.prompt << decode_chars(ids, vocab) << "\n";
}

}  // namespace

void add_sample(CLI::App& app) {
  auto a = std::make_shared<SampleArgs>();
  CLI::App* cmd = app.add_subcommand(
      "sample", "Generate text from a character language model checkpoint (data.task = kjv)");
  cmd->add_option("--checkpoint,-C", a->checkpoint, "language model checkpoint")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--prompt,-p", a->prompt, "text to continue")->capture_default_str();
  cmd->add_option("--temperature,-t", a->temperature,
                  "softmax temperature (0 = always the most likely character)")
      ->check(finite_range(0.0, 100.0))
      ->capture_default_str();
  cmd->add_option("--length,-n", a->length, "characters to generate")
      ->check(CLI::Range(int64_t{0}, int64_t{100000}))
      ->capture_default_str();
  cmd->add_option("--seed", a->seed, "random seed (same seed, same text)")->capture_default_str();
  cmd->add_flag("--no-cache", a->no_cache,
               "decode without the key/value cache (re-run the model on the whole window "
               "every step: the slow reference path)");
  cmd->callback([a] { run_sample(*a); });
}

}  // namespace scalelab::cli
