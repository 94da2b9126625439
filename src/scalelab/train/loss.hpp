// train/loss: label-smoothed cross-entropy, averaged over the non-pad targets.
//
// With p = softmax(z) over V classes and the smoothed target q = (1 - e)·onehot(y) + e/V
// (PyTorch's CrossEntropyLoss(label_smoothing=e) definition):
//   loss  = (1/N) sum_rows -sum_j q_j log p_j
//   dz    = (p - q) / N                       N = number of targets that are not <pad>
#pragma once
#include <cstdint>

namespace scalelab {

struct LossResult {
  double loss = 0;      // mean smoothed cross-entropy (nats)
  double nll = 0;       // mean plain negative log-likelihood (nats), for perplexity / bpc
  int64_t tokens = 0;   // N
  int64_t correct = 0;  // argmax == target
};

// logits [rows, vocab]; targets [rows] with pad_id ignored; dlogits (nullable) [rows, vocab].
template <class T>
LossResult cross_entropy(const T* logits, const int32_t* targets, int64_t rows, int64_t vocab,
                         double smoothing, int32_t pad_id, T* dlogits);

}  // namespace scalelab
