#include "scalelab/train/g2p_eval.hpp"

#include <algorithm>
#include <limits>

#include "scalelab/core/error.hpp"
#include "scalelab/core/quote.hpp"
#include "scalelab/train/decode.hpp"
#include "scalelab/train/rescore.hpp"

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

namespace {

std::vector<int32_t> reversed(std::vector<int32_t> ids) {
  std::reverse(ids.begin(), ids.end());
  return ids;
}

// One order's members decoding one batch: greedy for a single model at beam 1, else beam search
// (beam 1 of an ensemble is greedy on the mixture). The outputs are in the members' order.
std::vector<std::vector<int32_t>> decode_one_order(const Ensemble& models, const Batch& batch,
                                                   int64_t max_len, const G2pDecodeOptions& o) {
  if (o.beam <= 1 && models.size() == 1) return greedy_decode(*models[0], batch, max_len, o.use_cache);
  return beam_decode(models, batch, {.beam = std::max<int64_t>(1, o.beam),
                                     .length_penalty = o.length_penalty, .max_len = max_len,
                                     .use_cache = o.use_cache});
}

// L2R and R2L members together (header comment): the proposals of each order's search, rescored
// by every member. Returns the chosen outputs, left to right.
std::vector<std::vector<int32_t>> decode_both_orders(const std::vector<G2pMember>& members,
                                                     const Ensemble& l2r, const Ensemble& r2l,
                                                     const std::vector<Example>& sources,
                                                     const Batch& batch, int64_t max_len,
                                                     const G2pDecodeOptions& o) {
  const BeamOptions search{.beam = std::max<int64_t>(1, o.beam), .length_penalty = o.length_penalty,
                           .max_len = max_len, .use_cache = o.use_cache};
  const auto from_l2r = beam_search_nbest(l2r, batch, search);
  const auto from_r2l = beam_search_nbest(r2l, batch, search);
  // The union of the proposals per source, left to right, in the order of the header comment.
  std::vector<std::vector<std::vector<int32_t>>> proposals(sources.size());
  for (size_t i = 0; i < sources.size(); ++i) {
    auto add = [&](std::vector<int32_t> ids) {
      if (std::find(proposals[i].begin(), proposals[i].end(), ids) == proposals[i].end())
        proposals[i].push_back(std::move(ids));
    };
    for (const BeamResult& r : from_l2r[i]) add(r.tokens);
    for (const BeamResult& r : from_r2l[i]) add(reversed(r.tokens));
  }
  // S(y) = (1/M) sum_m log p_m(y_m | x) / lp(|y| + 1), one teacher-forced pass per member.
  std::vector<std::vector<double>> total(sources.size());
  for (size_t i = 0; i < sources.size(); ++i) total[i].assign(proposals[i].size(), 0.0);
  std::vector<std::vector<int32_t>> src;  // the cached path's sources, shared by the members
  if (o.use_cache)
    for (const Example& e : sources) src.push_back(e.src);
  for (const G2pMember& m : members) {
    if (o.use_cache) {  // each source encoded once, its proposals as rows of the cached decoder
      std::vector<std::vector<std::vector<int32_t>>> in_order(sources.size());
      for (size_t i = 0; i < sources.size(); ++i)
        for (const auto& y : proposals[i]) in_order[i].push_back(m.right_to_left ? reversed(y) : y);
      const auto logp = candidate_log_probs(*m.model, src, in_order);
      for (size_t i = 0; i < sources.size(); ++i)
        for (size_t j = 0; j < proposals[i].size(); ++j) total[i][j] += logp[i][j];
      continue;
    }
    std::vector<Example> pairs;  // the reference: one full forward per pair
    for (size_t i = 0; i < sources.size(); ++i)
      for (const auto& y : proposals[i])
        pairs.push_back({sources[i].src, m.right_to_left ? reversed(y) : y});
    const std::vector<double> logp = sequence_log_probs(*m.model, pairs, o.batch_size);
    size_t at = 0;
    for (size_t i = 0; i < sources.size(); ++i)
      for (size_t j = 0; j < proposals[i].size(); ++j) total[i][j] += logp[at++];
  }
  std::vector<std::vector<int32_t>> out;
  for (size_t i = 0; i < sources.size(); ++i) {
    size_t best = 0;
    double best_score = -std::numeric_limits<double>::infinity();
    for (size_t j = 0; j < proposals[i].size(); ++j) {
      const int64_t n = static_cast<int64_t>(proposals[i][j].size()) + 1;  // <eos> counted
      const double score = total[i][j] / double(members.size()) / gnmt_length_penalty(n, o.length_penalty);
      if (score > best_score) best = j, best_score = score;  // equal scores: the first
    }
    out.push_back(std::move(proposals[i][best]));
  }
  return out;
}

}  // namespace

void check_members(const std::vector<G2pMember>& members) {
  SL_CHECK(!members.empty(), "G2P: no model given");
  Ensemble all;
  for (const G2pMember& m : members) {
    SL_CHECK(m.model != nullptr, "G2P: a null model in the ensemble");
    SL_CHECK(m.model->config().arch == Architecture::encoder_decoder,
             "G2P needs an encoder-decoder model (this checkpoint is decoder-only)");
    all.push_back(m.model);
  }
  check_ensemble(all);
}

std::vector<std::vector<int32_t>> decode_members(const std::vector<G2pMember>& members,
                                                 const std::vector<Example>& sources,
                                                 const G2pDecodeOptions& options) {
  check_members(members);
  if (sources.empty()) return {};
  Ensemble l2r, r2l;
  for (const G2pMember& m : members) (m.right_to_left ? r2l : l2r).push_back(m.model);
  std::vector<int64_t> idx(sources.size());
  int64_t longest = 0;
  for (size_t i = 0; i < sources.size(); ++i) {
    idx[i] = static_cast<int64_t>(i);
    longest = std::max<int64_t>(longest, sources[i].src.size());
  }
  const Batch batch = make_batch(sources, idx, BatchLayout::seq2seq);
  const int64_t max_len = longest + options.max_extra_len;
  if (r2l.empty()) return decode_one_order(l2r, batch, max_len, options);
  if (l2r.empty()) {
    auto decoded = decode_one_order(r2l, batch, max_len, options);
    for (auto& ids : decoded) std::reverse(ids.begin(), ids.end());
    return decoded;
  }
  return decode_both_orders(members, l2r, r2l, sources, batch, max_len, options);
}

std::vector<Pronunciation> pronounce(Transformer<float>& model, const std::vector<std::string>& words,
                                     const Vocab& letters, const Vocab& phones,
                                     const G2pDecodeOptions& options) {
  return pronounce(Ensemble{&model}, words, letters, phones, options);
}

std::vector<Pronunciation> pronounce(const Ensemble& models, const std::vector<std::string>& words,
                                     const Vocab& letters, const Vocab& phones,
                                     const G2pDecodeOptions& options) {
  std::vector<G2pMember> members;
  for (Transformer<float>* m : models) members.push_back({m, false});
  return pronounce(members, words, letters, phones, options);
}

std::vector<Pronunciation> pronounce(const std::vector<G2pMember>& members,
                                     const std::vector<std::string>& words, const Vocab& letters,
                                     const Vocab& phones, const G2pDecodeOptions& options) {
  SL_CHECK(options.batch_size >= 1, "batch size = ", options.batch_size, ": must be >= 1");
  check_members(members);
  std::vector<Example> examples;
  examples.reserve(words.size());
  for (const std::string& w : words) {
    SL_CHECK(!w.empty(), "cannot pronounce an empty word");
    const std::string bad = unknown_letters(w, letters);
    SL_CHECK(bad.empty(), "word ", quote_for_message(w), " holds characters the model does not know: ",
             quote_for_message(bad), " (known: ", known_letters(letters), "; words are lower-cased)");
    examples.push_back({encode_word(w, letters), {}});
  }
  std::vector<Pronunciation> out;
  out.reserve(words.size());
  for (size_t start = 0; start < examples.size(); start += options.batch_size) {
    const size_t end = std::min(examples.size(), start + size_t(options.batch_size));
    const std::vector<Example> sources(examples.begin() + start, examples.begin() + end);
    for (const auto& ids : decode_members(members, sources, options)) {
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
  std::vector<G2pMember> members;
  for (Transformer<float>* m : models) members.push_back({m, false});
  return evaluate_g2p(members, entries, letters, phones, options);
}

G2pScore evaluate_g2p(const std::vector<G2pMember>& members, const std::vector<CmudictEntry>& entries,
                      const Vocab& letters, const Vocab& phones, const G2pDecodeOptions& options) {
  SL_CHECK(!entries.empty(), "evaluate_g2p: no words to evaluate");
  std::vector<std::string> words;
  words.reserve(entries.size());
  for (const auto& e : entries) words.push_back(e.word);
  G2pScore score;
  score.hypotheses = pronounce(members, words, letters, phones, options);
  for (size_t i = 0; i < entries.size(); ++i)
    score.rates.add(score_word(score.hypotheses[i], entries[i].pronunciations));
  return score;
}

}  // namespace scalelab
