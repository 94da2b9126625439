#include "scalelab/train/g2p_eval.hpp"

#include <algorithm>

#include "scalelab/core/error.hpp"
#include "scalelab/train/decode.hpp"

namespace scalelab {

std::string unknown_letters(const std::string& word, const Vocab& letters) {
  std::string unknown;
  for (char ch : word) {
    const std::string s(1, ch);
    if (!letters.contains(s) && unknown.find(ch) == std::string::npos) unknown += ch;
  }
  return unknown;
}

std::string known_letters(const Vocab& letters) {
  std::string all;
  for (int32_t id = kNumSpecialTokens; id < letters.size(); ++id)
    all += (all.empty() ? "" : " ") + letters.token(id);
  const std::string alphabet = "a b c d e f g h i j k l m n o p q r s t u v w x y z";
  const size_t at = all.find(alphabet);
  if (at != std::string::npos) all.replace(at, alphabet.size(), "a-z");
  return all;
}

std::vector<Pronunciation> pronounce(Transformer<float>& model, const std::vector<std::string>& words,
                                     const Vocab& letters, const Vocab& phones,
                                     const G2pDecodeOptions& options) {
  return pronounce(Ensemble{&model}, words, letters, phones, options);
}

std::vector<Pronunciation> pronounce(const Ensemble& models, const std::vector<std::string>& words,
                                     const Vocab& letters, const Vocab& phones,
                                     const G2pDecodeOptions& options) {
  SL_CHECK(options.batch_size >= 1, "batch size = ", options.batch_size, ": must be >= 1");
  SL_CHECK(!models.empty(), "G2P: no model given");
  for (const Transformer<float>* m : models)
    SL_CHECK(m->config().arch == Architecture::encoder_decoder,
             "G2P needs an encoder-decoder model (this checkpoint is decoder-only)");
  check_ensemble(models);
  std::vector<Example> examples;
  examples.reserve(words.size());
  for (const std::string& w : words) {
    SL_CHECK(!w.empty(), "cannot pronounce an empty word");
    const std::string bad = unknown_letters(w, letters);
    SL_CHECK(bad.empty(), "word '", w, "' holds characters the model does not know: '", bad,
             "' (known: ", known_letters(letters), "; words are lower-cased)");
    examples.push_back({encode_word(w, letters), {}});
  }
  std::vector<Pronunciation> out;
  out.reserve(words.size());
  for (size_t start = 0; start < examples.size(); start += options.batch_size) {
    const size_t end = std::min(examples.size(), start + size_t(options.batch_size));
    std::vector<int64_t> idx(end - start);
    int64_t longest = 0;
    for (size_t i = start; i < end; ++i) {
      idx[i - start] = static_cast<int64_t>(i);
      longest = std::max<int64_t>(longest, examples[i].src.size());
    }
    const Batch batch = make_batch(examples, idx, BatchLayout::seq2seq);
    const int64_t max_len = longest + options.max_extra_len;
    // Greedy is beam search with beam 1 (beam.hpp); one model takes the simpler greedy path.
    const auto decoded = options.beam <= 1 && models.size() == 1
        ? greedy_decode(*models[0], batch, max_len, options.use_cache)
        : beam_decode(models, batch, {.beam = std::max<int64_t>(1, options.beam),
                                      .length_penalty = options.length_penalty,
                                      .max_len = max_len, .use_cache = options.use_cache});
    for (const auto& ids : decoded) {
      Pronunciation p;
      for (int32_t id : ids) p.push_back(phones.token(id));
      out.push_back(std::move(p));
    }
  }
  return out;
}

G2pScore evaluate_g2p(Transformer<float>& model, const std::vector<CmudictEntry>& entries,
                      const Vocab& letters, const Vocab& phones, const G2pDecodeOptions& options) {
  return evaluate_g2p(Ensemble{&model}, entries, letters, phones, options);
}

G2pScore evaluate_g2p(const Ensemble& models, const std::vector<CmudictEntry>& entries,
                      const Vocab& letters, const Vocab& phones, const G2pDecodeOptions& options) {
  SL_CHECK(!entries.empty(), "evaluate_g2p: no words to evaluate");
  std::vector<std::string> words;
  words.reserve(entries.size());
  for (const auto& e : entries) words.push_back(e.word);
  G2pScore score;
  score.hypotheses = pronounce(models, words, letters, phones, options);
  for (size_t i = 0; i < entries.size(); ++i)
    score.rates.add(score_word(score.hypotheses[i], entries[i].pronunciations));
  return score;
}

}  // namespace scalelab
