// train/beam: beam search for the encoder-decoder, with the GNMT length penalty.
//
// Each source keeps `beam` live hypotheses. At every step each live hypothesis is extended by every
// emittable token (score = sum of log-probabilities); <pad>, <bos> and <unk> are never candidates
// (decode.hpp: emittable_token). The log-probabilities stay the model's log-softmax over the WHOLE
// vocabulary, not renormalised over the emittable tokens: an allowed token's score is exactly what
// it was before the mask, so a search that would not have picked a masked token is unchanged, and
// scores stay comparable with the training loss (the masked tokens' mass is simply not spent); the best 2·beam candidates are ranked, and of those a
// candidate ending in <eos> is finished if it ranks within the first `beam`, otherwise the best
// non-<eos> candidates become the next live hypotheses. A source is done once `beam` hypotheses
// have finished and the beam-th best of them is at least as good as the best live hypothesis
// would be if it ended now (Hugging Face's criterion; so an early-finishing poor hypothesis cannot
// cut the search short), or at max_len, where only <eos> may follow. The answer is
// the finished hypothesis with the best normalised score
//     score / lp(|Y|),   lp(n) = ((5 + n) / 6)^alpha     (Wu et al. 2016, GNMT, eq. 14)
// where |Y| counts the output tokens including <eos>; alpha = 0 ranks by raw log-probability.
// With beam = 1 this is exactly greedy decoding (the top candidate is taken; <eos> stops).
// With use_cache (the default) each step runs the cached decoder on one token per live hypothesis
// (Transformer::decode_step): a hypothesis' cache row is copied from its parent when the beam is
// re-selected, and sources that are done leave the batch. use_cache = false re-runs the decoder on
// every hypothesis' whole prefix (the reference the cached path is tested against).
//
// Ensembles: given several models (same vocabularies, each trained on its own), every step scores
// a token by the mean of the members' distributions,
//     log p(v | prefix) = log( (1/M) sum_m p_m(v | prefix) ),
// and the search above runs on that; each member keeps its own cache rows, re-selected together.
// An ensemble of one model is exactly that model's search.
#pragma once
#include <cstdint>
#include <vector>

#include "scalelab/data/batch.hpp"
#include "scalelab/model/transformer.hpp"

namespace scalelab {

struct BeamOptions {
  int64_t beam = 5;
  double length_penalty = 0.6;  // alpha of lp(n) = ((5 + n) / 6)^alpha; 0: none
  int64_t max_len = 64;         // output tokens, <eos> excluded (capped at model max_len - 1)
  bool use_cache = true;        // false: the uncached reference path
};

struct BeamResult {
  std::vector<int32_t> tokens;  // the best finished hypothesis, without <bos>/<eos>
  double score = 0;             // its normalised score: log-probability / lp(|Y|)
};

double gnmt_length_penalty(int64_t length, double alpha);

using Ensemble = std::vector<Transformer<float>*>;  // non-owning; one or more members
// Throws Error unless every member is an encoder-decoder with the vocabulary sizes of member 0.
void check_ensemble(const Ensemble& models);

// Returns, for each source of the batch (seq2seq layout), every finished hypothesis (at least
// one), best normalised score first (equal scores: the one finished earlier first).
std::vector<std::vector<BeamResult>> beam_search_nbest(const Ensemble& models, const Batch& batch,
                                                       const BeamOptions& options);
// Returns, for each source of the batch (seq2seq layout), the best output and its score.
std::vector<BeamResult> beam_search(Transformer<float>& model, const Batch& batch,
                                    const BeamOptions& options);
std::vector<BeamResult> beam_search(const Ensemble& models, const Batch& batch,
                                    const BeamOptions& options);
// The tokens of beam_search's results.
std::vector<std::vector<int32_t>> beam_decode(Transformer<float>& model, const Batch& batch,
                                              const BeamOptions& options);
std::vector<std::vector<int32_t>> beam_decode(const Ensemble& models, const Batch& batch,
                                              const BeamOptions& options);

}  // namespace scalelab
