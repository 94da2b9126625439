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
#include "scalelab/model/transformer.hpp"

namespace scalelab {

// One log-probability per pair, in order (the pairs are batched in order, so the result does
// not depend on batch_size beyond float rounding). Throws Error for a decoder-only model, an
// empty source or an id outside the model's vocabularies.
std::vector<double> sequence_log_probs(Transformer<float>& model, const std::vector<Example>& pairs,
                                       int64_t batch_size = 64);

}  // namespace scalelab
