// scalelab agree: how two G2P models' answers on the same words relate (data/predictions.hpp):
// where both are right, where only one is, where both are wrong alike or differently, and the
// oracle WER (neither right), which bounds what an ensemble choosing between them can reach.
#include <iomanip>
#include <iostream>

#include "commands.hpp"
#include "scalelab/data/predictions.hpp"

namespace scalelab::cli {

namespace {

struct AgreeArgs {
  std::string first, second;  // files written by scalelab eval --predictions
};

void run_agree(const AgreeArgs& a) {
  const Agreement g = compare_predictions(read_predictions(a.first), read_predictions(a.second));
  const auto line = [&](const std::string& what, int64_t count) {
    std::cout << std::left << std::setw(34) << what << std::right << std::setw(8) << count << "  "
              << std::setw(6) << std::fixed << std::setprecision(2)
              << 100.0 * static_cast<double>(count) / static_cast<double>(g.words) << " %\n";
  };
  std::cout << "scalelab agree: " << g.words << " words\nfirst:  " << a.first
            << "\nsecond: " << a.second << "\n";
  line("same output", g.same_output);
  line("both right", g.both_right);
  line("only the first right", g.only_first_right);
  line("only the second right", g.only_second_right);
  line("both wrong, same output", g.both_wrong_same);
  line("both wrong, different outputs", g.both_wrong_different);
  std::cout << std::fixed << std::setprecision(2) << "WER first " << 100 * g.first_wer()
            << " %, second " << 100 * g.second_wer() << " %, oracle (neither right) "
            << 100 * g.oracle_wer() << " %\n";
}

}  // namespace

void add_agree(CLI::App& app) {
  auto a = std::make_shared<AgreeArgs>();
  CLI::App* cmd = app.add_subcommand(
      "agree", "Compare two G2P models' answers on the same words (files written by scalelab eval "
               "--predictions): agreement, who is right where, and the oracle WER of the pair");
  cmd->add_option("first", a->first, "predictions of the first model (scalelab eval --predictions)")
      ->required();
  cmd->add_option("second", a->second, "predictions of the second model, same split and sampling")
      ->required();
  cmd->callback([a] { run_agree(*a); });
}

}  // namespace scalelab::cli
