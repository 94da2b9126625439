// scalelab distill: a teacher's pronunciations of every training word, written as a dictionary
// file for a student to train on (data.teacher_targets; sequence-level knowledge distillation,
// train/distill.hpp).
#include <chrono>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "commands.hpp"
#include "output_file.hpp"
#include "loaded_run.hpp"
#include "scalelab/core/atomic_file.hpp"
#include "scalelab/core/error.hpp"
#include "scalelab/data/teacher_targets.hpp"
#include "scalelab/train/distill.hpp"

namespace scalelab::cli {

namespace {

struct DistillArgs {
  std::vector<std::string> checkpoints;  // two or more: an ensemble teacher
  std::string out;
  int64_t beam = 5;
  double length_penalty = 0.6;
  int64_t batch_size = 64;
  bool force = false;
  bool quiet = false;
};

void run_distill(const DistillArgs& a) {
  // Every check before the long decode: the output first, then the teacher.
  check_output_file("--out", a.out, a.force);
  LoadedRun first = load_run(a.checkpoints.at(0));
  SL_CHECK(first.config.data.kind() == TaskKind::cmudict, a.checkpoints[0], ": data.task = ",
           first.config.data.task, ", not a G2P (cmudict) checkpoint");
  const std::vector<LoadedRun> others = load_ensemble_members(first, a.checkpoints);
  std::vector<G2pMember> teacher{{first.model.get(), first.config.data.right_to_left()}};
  for (const LoadedRun& o : others) teacher.push_back({o.model.get(), o.config.data.right_to_left()});
  const TaskData& d = first.data;

  const auto t0 = std::chrono::steady_clock::now();
  const auto seconds = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  const Distilled out = distill_pronunciations(
      teacher, d.train_words, d.src_vocab, d.tgt_vocab,
      {.beam = a.beam, .length_penalty = a.length_penalty, .batch_size = a.batch_size},
      [&](int64_t done, int64_t total) {
        if (!a.quiet)
          std::cerr << "distill: " << done << " / " << total << " words, " << std::fixed
                    << std::setprecision(0) << seconds() << " s\n";
      });

  std::vector<std::string> header{
      "scalelab distill: a teacher's pronunciations of the " + std::to_string(out.entries.size()) +
          " training words (data.teacher_targets)",
      "decoding: " + (a.beam <= 1 ? std::string("greedy") : "beam " + std::to_string(a.beam)) +
          ", length penalty " + std::to_string(a.length_penalty)};
  for (const std::string& c : a.checkpoints) header.push_back("teacher: " + c);
  std::ostringstream rates;
  rates << std::fixed << std::setprecision(2) << "teacher on these words: WER "
        << 100 * out.teacher_rates.wer() << " %, PER " << 100 * out.teacher_rates.per()
        << " %; pronounced as nothing (dictionary kept): " << out.kept_dictionary;
  header.push_back(rates.str());
  write_file_atomically(a.out, format_dictionary(out.entries, header));

  std::cout << "wrote " << a.out << ": " << out.entries.size() << " words\n"
            << rates.str() << "\n"
            << std::fixed << std::setprecision(1) << "decoding " << seconds() << " s\n"
            << "train a student on them: scalelab train ... --set data.teacher_targets=" << a.out
            << " [--set data.teacher_mix=add]\n";
}

}  // namespace

void add_distill(CLI::App& app) {
  auto a = std::make_shared<DistillArgs>();
  CLI::App* cmd = app.add_subcommand(
      "distill", "Pronounce every training word with a G2P teacher (a checkpoint or an "
                 "ensemble) and write the result as a dictionary for a student "
                 "(data.teacher_targets: sequence-level knowledge distillation)");
  cmd->add_option("--checkpoint,-C", a->checkpoints,
                  "teacher checkpoint (data.task = cmudict); give it again (-C a -C b ...) for an "
                  "ensemble teacher, as in scalelab eval (L2R and R2L members may be mixed)")
      ->required()
      ->take_all()
      ->check(CLI::ExistingFile);
  cmd->add_option("--out,-o", a->out,
                  "dictionary file to write (\"WORD<TAB>P1 P2 ...\"; written whole or not at all)")
      ->required();
  cmd->add_flag("--force", a->force, "overwrite --out if it exists");
  add_search_options(cmd, a->beam, a->length_penalty);
  cmd->add_option("--batch-size", a->batch_size, "words decoded together")
      ->check(CLI::Range(int64_t{1}, int64_t{4096}))
      ->capture_default_str();
  cmd->add_flag("-q,--quiet", a->quiet, "no progress lines on stderr");
  cmd->callback([a] { run_distill(*a); });
}

}  // namespace scalelab::cli
