#include "scalelab/train/loss.hpp"

#include <vector>

#include "scalelab/core/error.hpp"
#include "scalelab/core/parallel.hpp"
#include "scalelab/kernels/cross_entropy_row.hpp"

namespace scalelab {

template <class T>
LossResult cross_entropy(const T* logits, const int32_t* targets, int64_t rows, int64_t vocab,
                         double smoothing, int32_t pad_id, T* dlogits) {
  LossResult r;
  for (int64_t i = 0; i < rows; ++i) {
    if (targets[i] == pad_id) continue;
    SL_CHECK(targets[i] >= 0 && targets[i] < vocab, "target id ", targets[i],
             " is outside the vocabulary [0, ", vocab, ")");
    ++r.tokens;
  }
  std::vector<double> row_loss(rows, 0.0), row_nll(rows, 0.0);
  std::vector<int> row_correct(rows, 0);
  const double inv_n = r.tokens ? 1.0 / double(r.tokens) : 0.0;
  parallel_for(rows, [&](int64_t i) {
    const T* z = logits + i * vocab;
    T* dz = dlogits ? dlogits + i * vocab : nullptr;
    if (targets[i] == pad_id) {
      if (dz)
        for (int64_t j = 0; j < vocab; ++j) dz[j] = 0;
      return;
    }
    const CrossEntropyRow row =
        cross_entropy_row(z, vocab, targets[i], smoothing, /*grad_scale=*/inv_n, dz);
    const double nll = row.log_norm - z[targets[i]];
    // -sum_j q_j log p_j = (1-e)·nll + (e/V)·sum_j (log_norm - z_j)
    row_loss[i] = (1 - smoothing) * nll + smoothing * (row.log_norm - row.sum_z / double(vocab));
    row_nll[i] = nll;
    row_correct[i] = row.argmax == targets[i];
  });
  for (int64_t i = 0; i < rows; ++i) {  // in row order: deterministic
    r.loss += row_loss[i];
    r.nll += row_nll[i];
    r.correct += row_correct[i];
  }
  r.loss *= inv_n;
  r.nll *= inv_n;
  return r;
}

template LossResult cross_entropy<float>(const float*, const int32_t*, int64_t, int64_t, double,
                                         int32_t, float*);
template LossResult cross_entropy<double>(const double*, const int32_t*, int64_t, int64_t, double,
                                          int32_t, double*);

}  // namespace scalelab
