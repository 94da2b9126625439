// train/rescore: the log-probability a model gives to given outputs (teacher forcing), for
// scoring candidates proposed by another search (L2R/R2L ensembles, g2p_eval.hpp).
//
// For each (x, y) pair, with y_{|y|+1} = <eos>:
//     log p(y | x) = sum_{t=1}^{|y|+1} log softmax(z_t)[y_t],   z_t = logits after <bos> y_<t
// one forward pass per batch (src = x <eos>, tgt_in = <bos> y; data/batch.hpp), the log-softmax
// in double from the float logits as beam search scores its tokens (beam.hpp), so the result
// equals a search's un-normalised score of the same output up to float rounding.
#pragma once
#include <cstdint>
#include <vector>

#include "scalelab/data/example.hpp"
#include "scalelab/model/decoder_cache.hpp"
#include "scalelab/model/transformer.hpp"

namespace scalelab {

// One log-probability per pair, in order (the pairs are batched in order, so the result does
// not depend on batch_size beyond float rounding). Throws Error for a decoder-only model, an
// empty source or an id outside the model's vocabularies.
std::vector<double> sequence_log_probs(Transformer<float>& model, const std::vector<Example>& pairs,
                                       int64_t batch_size = 64);

// The same log-probabilities through the cached decoder (model/decoder_cache.hpp), for many
// candidates per source: each source is encoded, and its memory projected, once; all its
// candidates are teacher-forced one position at a time as rows of one cache (row r at step t
// feeds <bos> y_1 .. y_{|y|} <eos> ..., and scores y_{t+1}, or <eos> at t = |y|). Whole sources
// are grouped until a group holds max_rows candidates (a source with more is a group of its own).
// Returns log p(candidates[i][j] | sources[i]) in the same layout; equal to sequence_log_probs of
// the pairs (sources[i], candidates[i][j]) up to float rounding. Throws Error as sequence_log_probs
// does, and for a candidate longer than model.max_len - 1 (no room for its <eos>).
std::vector<std::vector<double>> candidate_log_probs(
    Transformer<float>& model, const std::vector<std::vector<int32_t>>& sources,
    const std::vector<std::vector<std::vector<int32_t>>>& candidates, int64_t max_rows = 512);

}  // namespace scalelab
