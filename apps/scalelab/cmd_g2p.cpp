// scalelab g2p: pronounce words with a trained G2P checkpoint (words as arguments, or from stdin,
// whitespace-separated), one "word<TAB>P1 P2 ..." line per word.
#include <algorithm>
#include <cctype>
#include <iostream>

#include "commands.hpp"
#include "loaded_run.hpp"
#include "scalelab/core/error.hpp"
#include "scalelab/core/quote.hpp"
#include "scalelab/train/g2p_eval.hpp"

namespace scalelab::cli {

namespace {

struct G2pArgs {
  std::string checkpoint;
  std::vector<std::string> words;
  int64_t beam = 5;
  double length_penalty = 0.6;
  bool no_cache = false;
};

void run_g2p(const G2pArgs& a) {
  std::vector<std::string> words = a.words;
  if (words.empty()) {
    for (std::string w; std::cin >> w;) words.push_back(w);
  }
  SL_CHECK(!words.empty(), "no words to pronounce (give them as arguments or on stdin)");
  LoadedRun run = load_run(a.checkpoint);
  SL_CHECK(run.config.data.kind() == TaskKind::cmudict, a.checkpoint, ": data.task = ",
           run.config.data.task, ", not a G2P (cmudict) checkpoint");
  std::vector<std::string> lower = words;
  std::vector<std::string> bad;
  // The encoder reads the letters and an end token: at most model.max_len positions.
  const int64_t longest = run.config.model.max_len - 1;
  for (std::string& w : lower) {
    std::transform(w.begin(), w.end(), w.begin(), [](unsigned char c) { return std::tolower(c); });
    SL_CHECK(static_cast<int64_t>(w.size()) <= longest, "word ", quote_for_message(w), " has ", w.size(),
             " letters; this model reads at most ", longest, " (model.max_len = ",
             run.config.model.max_len, ", one position for the end token)");
    const std::string unknown = unknown_letters(w, run.data.src_vocab);
    if (!unknown.empty()) bad.push_back(quote_for_message(w) + " (" + quote_for_message(unknown) + ")");
  }
  if (!bad.empty()) {
    std::string list;
    for (size_t i = 0; i < bad.size() && i < 5; ++i) list += (i ? ", " : "") + bad[i];
    if (bad.size() > 5) list += ", ...";
    throw_error(bad.size(), " word(s) hold characters the model cannot read: ", list,
                "; allowed: ", known_letters(run.data.src_vocab));
  }
  const auto prons = pronounce(std::vector<G2pMember>{{run.model.get(), run.config.data.right_to_left()}}, lower, run.data.src_vocab, run.data.tgt_vocab,
                               {.beam = a.beam, .length_penalty = a.length_penalty,
                                .use_cache = !a.no_cache});
  for (size_t i = 0; i < words.size(); ++i) {
    std::cout << words[i] << "\t";
    for (size_t j = 0; j < prons[i].size(); ++j) std::cout << (j ? " " : "") << prons[i][j];
    std::cout << "\n";
  }
}

}  // namespace

void add_g2p(CLI::App& app) {
  auto a = std::make_shared<G2pArgs>();
  CLI::App* cmd = app.add_subcommand(
      "g2p", "Pronounce words (ARPAbet phones, no stress) with a G2P checkpoint; words from the "
             "arguments, else from stdin");
  cmd->add_option("--checkpoint,-C", a->checkpoint, "G2P checkpoint (data.task = cmudict)")
      ->required()
      ->check(CLI::ExistingFile);
  add_search_options(cmd, a->beam, a->length_penalty);
  cmd->add_option("words", a->words, "words to pronounce (none: read stdin)");
  cmd->add_flag("--no-cache", a->no_cache,
               "decode without the key/value cache (re-run the decoder on the whole prefix "
               "every step: the slow reference path)");
  cmd->callback([a] { run_g2p(*a); });
}

}  // namespace scalelab::cli
