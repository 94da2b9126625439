// scalelab eval: score a checkpoint on a split of its own task: a held-out one (valid, test), or
// the training data itself (train: how well the model fits what it learned from).
//   cmudict:   WER and PER over the split's words (greedy or beam search), and the loss; several
//              checkpoints of one task and split decode as an ensemble (train/g2p_eval.hpp; their
//              phone orders may differ: L2R and R2L members rescore each other's proposals)
//   kjv:       bits per character over the split's books (every character predicted once)
//   synthetic: loss, token accuracy and exact match (greedy)
#include <algorithm>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "commands.hpp"
#include "output_file.hpp"
#include "loaded_run.hpp"
#include "scalelab/core/atomic_file.hpp"
#include "scalelab/data/predictions.hpp"
#include "scalelab/train/g2p_eval.hpp"
#include "scalelab/train/trainer.hpp"

namespace scalelab::cli {

namespace {

struct EvalArgs {
  std::vector<std::string> checkpoints;  // two or more: a G2P ensemble
  std::string split = "test";
  int64_t beam = 5;
  double length_penalty = 0.6;
  int64_t every = 1;
  int64_t limit = 0;
  int64_t batch_size = 64;
  bool no_cache = false;
  std::string predictions;  // G2P: write every word's answer here (data/predictions.hpp)
  bool force = false;       // overwrite `predictions`
  bool write_predictions = false;  // --predictions given (an empty path is refused, not ignored)
};

// Every `every`-th item (0, every, 2 every, ...), then the first `limit` of those (0: all).
template <class T>
std::vector<T> pick(const std::vector<T>& items, int64_t every, int64_t limit) {
  std::vector<T> out;
  for (size_t i = 0; i < items.size(); i += static_cast<size_t>(every)) {
    if (limit > 0 && static_cast<int64_t>(out.size()) == limit) break;
    out.push_back(items[i]);
  }
  return out;
}

template <class T>
const std::vector<T>& of_split(const std::string& split, const std::vector<T>& train,
                               const std::vector<T>& valid, const std::vector<T>& test) {
  return split == "train" ? train : split == "valid" ? valid : test;
}

// The predictions file's header: what was scored, by what, and the result.
std::vector<std::string> predictions_header(const EvalArgs& a, int64_t step, const ErrorRates& rates) {
  std::vector<std::string> lines{
      "scalelab eval --predictions: " + a.split + " split, " + std::to_string(rates.words) +
          " words, checkpoint step " + std::to_string(step),
      "decoding: " + (a.beam <= 1 ? std::string("greedy") : "beam " + std::to_string(a.beam)) +
          ", length penalty " + std::to_string(a.length_penalty) +
          (a.every > 1 ? ", every " + std::to_string(a.every) + "-th word" : "") +
          (a.limit > 0 ? ", first " + std::to_string(a.limit) : "")};
  for (const std::string& c : a.checkpoints) lines.push_back("checkpoint: " + c);
  std::ostringstream result;
  result << std::fixed << std::setprecision(2) << "WER " << 100 * rates.wer() << " % ("
         << rates.wrong_words << " wrong), PER " << 100 * rates.per() << " %";
  lines.push_back(result.str());
  lines.push_back("columns: word, hypothesis, right|wrong, edits to the closest reference, references (' | ')");
  return lines;
}

void run_eval(const EvalArgs& a) {
  if (a.write_predictions) {  // before loading anything: the file must not be lost
    check_output_file("--predictions", a.predictions, a.force);
  }
  LoadedRun run = load_run(a.checkpoints.at(0));
  SL_CHECK(a.predictions.empty() || run.config.data.kind() == TaskKind::cmudict,
           "--predictions is for G2P checkpoints (data.task = \"cmudict\"), '", a.checkpoints[0],
           "' is a ", task_label(run.config.data), " model");
  if (a.checkpoints.size() > 1)
    SL_CHECK(run.config.data.kind() == TaskKind::cmudict, "--checkpoint given ",
             a.checkpoints.size(), " times: ensembles are for G2P (data.task = \"cmudict\"), '",
             a.checkpoints[0], "' is a ", task_label(run.config.data), " model");
  const std::vector<LoadedRun> others = load_ensemble_members(run, a.checkpoints);
  const TaskData& d = run.data;
  const std::string head = "scalelab eval: " + task_label(run.config.data) + ", " + a.split +
                           " split, checkpoint step " + std::to_string(run.step) + "\n";
  std::cout << head << std::fixed;
  // The examples of the split (kjv, synthetic; G2P scores its words instead).
  const auto examples = [&] {
    return pick(of_split(a.split, d.train, d.valid, d.test), a.every, a.limit);
  };
  switch (run.config.data.kind()) {
    case TaskKind::cmudict: {
      const auto words =
          pick(of_split(a.split, d.train_words, d.valid_words, d.test_words), a.every, a.limit);
      std::vector<const LoadedRun*> runs{&run};
      for (const LoadedRun& o : others) runs.push_back(&o);
      std::vector<G2pMember> models;
      std::vector<double> losses;  // each member's, teacher-forced
      for (const LoadedRun* r : runs) {
        const bool r2l = r->config.data.right_to_left();
        models.push_back({r->model.get(), r2l});
        // The loss over the pronunciations of the same words (all of them, not only the first),
        // in the order the member emits them.
        std::vector<Example> scored = make_g2p_examples(words, {d.src_vocab, d.tgt_vocab});
        if (r2l)
          for (Example& e : scored) std::reverse(e.tgt.begin(), e.tgt.end());
        losses.push_back(evaluate(*r->model, d, scored, a.batch_size, 0).nll);
      }
      const G2pScore s = evaluate_g2p(models, words, d.src_vocab, d.tgt_vocab,
                                      {.beam = a.beam, .length_penalty = a.length_penalty,
                                       .batch_size = a.batch_size, .use_cache = !a.no_cache});
      std::cout << std::setprecision(2) << "words " << s.rates.words << "\nWER " << 100 * s.rates.wer()
                << " % (" << s.rates.wrong_words << " wrong)\nPER " << 100 * s.rates.per() << " % ("
                << s.rates.edits << " edits / " << s.rates.reference_tokens << " phones)\n"
                << "decoding " << (a.beam <= 1 ? std::string("greedy")
                                               : "beam " + std::to_string(a.beam))
                << ", length penalty " << a.length_penalty
                << (models.size() > 1 ? ", ensemble of " + std::to_string(models.size()) : "")
                << "\n" << std::setprecision(4);
      if (models.size() == 1) std::cout << "loss " << losses[0] << " nats/phone\n";
      for (size_t m = 0; models.size() > 1 && m < models.size(); ++m)
        std::cout << "loss of member " << m << " " << losses[m] << " nats/phone ("
                  << a.checkpoints[m] << (models[m].right_to_left ? ", right to left" : "") << ")\n";
      if (!a.predictions.empty()) {
        write_file_atomically(a.predictions,
                              format_predictions(score_predictions(words, s.hypotheses),
                                                 predictions_header(a, run.step, s.rates)));
        std::cout << "predictions " << a.predictions << "\n";
      }
      break;
    }
    case TaskKind::kjv: {
      const EvalResult r = evaluate(*run.model, d, examples(), a.batch_size, 0);
      std::cout << std::setprecision(4) << "characters " << r.tokens << "\nbpc "
                << r.nll / std::log(2.0) << "\nloss " << r.nll << " nats/char\n";
      break;
    }
    case TaskKind::synthetic: {
      const std::vector<Example> scored = examples();
      const EvalResult r = evaluate(*run.model, d, scored, a.batch_size,
                                    static_cast<int64_t>(scored.size()));
      std::cout << std::setprecision(4) << "examples " << scored.size() << "\nloss " << r.nll
                << " nats/token\ntoken accuracy " << r.token_accuracy;
      if (r.exact_match >= 0) std::cout << "\nexact match " << r.exact_match << " (greedy)";
      std::cout << "\n";
      break;
    }
  }
}

}  // namespace

void add_eval(CLI::App& app) {
  auto a = std::make_shared<EvalArgs>();
  CLI::App* cmd = app.add_subcommand(
      "eval", "Score a checkpoint on a split of its task: WER/PER (cmudict), bits per character "
              "(kjv), loss and exact match (synthetic tasks)");
  cmd->add_option("--checkpoint,-C", a->checkpoints,
                  "checkpoint written by scalelab train; G2P: give it again (-C a -C b ...) to "
                  "decode with an ensemble: the mean of the members' distributions at every step; "
                  "members trained left to right and right to left (data.phone_order) rescore "
                  "each other's n-best lists")
      ->required()
      ->take_all()
      ->check(CLI::ExistingFile);
  cmd->add_option("--split", a->split,
                  "split to score: test or valid (held out), or train (the words or windows the "
                  "model learned from: a train score close to the test one means underfitting)")
      ->check(CLI::IsMember({"train", "valid", "test"}))
      ->capture_default_str();
  cmd->add_option("--every", a->every,
                  "score every N-th word / window / example of the split (a spread sample, e.g. "
                  "of the 101,471 training words), before --limit")
      ->check(CLI::Range(int64_t{1}, int64_t{1000000}))
      ->capture_default_str();
  add_search_options(cmd, a->beam, a->length_penalty);
  cmd->add_option("--limit", a->limit,
                  "score only the first N words / windows / examples (after --every; 0 = all)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--batch-size", a->batch_size, "examples per forward pass")
      ->check(CLI::Range(int64_t{1}, int64_t{4096}))
      ->capture_default_str();
  cmd->add_flag("--no-cache", a->no_cache,
               "decode without the key/value cache (re-run the decoder on the whole prefix "
               "every step: the slow reference path)");
  CLI::Option* predictions =
      cmd->add_option("--predictions", a->predictions,
                      "G2P: write every scored word's answer to this file (tab-separated: word, "
                      "hypothesis, right|wrong, edits, references; compare two with scalelab agree)");
  cmd->add_flag("--force", a->force, "overwrite the --predictions file if it exists")->needs(predictions);
  cmd->callback([a, predictions] {
    a->write_predictions = predictions->count() > 0;
    run_eval(*a);
  });
}

}  // namespace scalelab::cli
