#include "scalelab/train/loss.hpp"

#include <cmath>
#include <vector>

#include "scalelab/core/error.hpp"
#include "scalelab/core/parallel.hpp"

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
    int64_t argmax = 0;
    for (int64_t j = 1; j < vocab; ++j) argmax = z[j] > z[argmax] ? j : argmax;
    // e_j = exp(z_j - max z), kept for the gradient (one exp per logit, not two)
    thread_local std::vector<double> e;
    e.resize(static_cast<size_t>(vocab));
    double sum = 0, sum_z = 0;
    for (int64_t j = 0; j < vocab; ++j) {
      e[j] = std::exp(double(z[j]) - double(z[argmax]));
      sum += e[j];
      sum_z += z[j];
    }
    const double log_norm = double(z[argmax]) + std::log(sum);  // log sum_j exp z_j
    const double nll = log_norm - z[targets[i]];
    // -sum_j q_j log p_j = (1-e)·nll + (e/V)·sum_j (log_norm - z_j)
    row_loss[i] = (1 - smoothing) * nll + smoothing * (log_norm - sum_z / double(vocab));
    row_nll[i] = nll;
    row_correct[i] = argmax == targets[i];
    if (dz) {
      const double inv_sum = 1.0 / sum;
      for (int64_t j = 0; j < vocab; ++j) {
        const double p = e[j] * inv_sum;  // = exp(z_j - log_norm)
        const double q = (j == targets[i] ? 1 - smoothing : 0.0) + smoothing / double(vocab);
        dz[j] = static_cast<T>((p - q) * inv_n);
      }
    }
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
