// nn/dropout: inverted dropout. y = x · m / (1 - p) with m ~ Bernoulli(1 - p), identity when not
// training or p = 0. The mask comes from the caller's Rng, so a seed fixes every mask: one 64-bit
// key is drawn per call and element i's mask is a hash of (key, i) (kernels/dropout.hpp), the same
// on any number of threads and any SIMD width.
#pragma once
#include <algorithm>

#include "scalelab/core/parallel.hpp"
#include "scalelab/core/rng.hpp"
#include "scalelab/core/tensor.hpp"
#include "scalelab/kernels/dropout.hpp"

namespace scalelab {

template <class T>
class Dropout {
 public:
  Dropout() = default;
  explicit Dropout(double p) : p_(p) {}

  // In place on x[n]; rng may be null when not training.
  void forward(T* x, int64_t n, Rng* rng, bool training) {
    active_ = training && p_ > 0;
    if (!active_) return;
    SL_CHECK(rng != nullptr, "dropout while training needs a random generator");
    mask_.resize({n});
    dropout_forward<T>(rng->next_u64(), p_, x, mask_.data(), n);
  }
  // forward on x[n], then out = residual + x, fused into one pass when dropout is active.
  void forward_add(T* x, const T* residual, T* out, int64_t n, Rng* rng, bool training) {
    active_ = training && p_ > 0;
    if (!active_) {
      residual_add<T>(residual, x, out, n);
      return;
    }
    SL_CHECK(rng != nullptr, "dropout while training needs a random generator");
    mask_.resize({n});
    dropout_forward_add<T>(rng->next_u64(), p_, x, mask_.data(), residual, out, n);
  }
  // In place on dy[n]: dx = dy · m / (1 - p)  (from y = x · m / (1 - p)).
  void backward(T* dy, int64_t n) const {
    if (!active_) return;
    const T* mask = mask_.data();
    parallel_elements(n, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) dy[i] *= mask[i];
    });
  }
  // dx[n] = dy · m / (1 - p), out of place (a copy when inactive): one pass instead of a copy
  // followed by the in-place backward.
  void backward_into(const T* dy, T* dx, int64_t n) const {
    if (!active_) {
      parallel_copy(dy, dx, n);
      return;
    }
    const T* mask = mask_.data();
    parallel_elements(n, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) dx[i] = dy[i] * mask[i];
    });
  }
  // dy itself where the forward was the identity (not training, or p = 0), else backward_into
  // scratch and scratch: the gradient of the input, without a copy when there is nothing to do.
  // The caller must not write dy while it reads the result.
  const T* backward_view(const T* dy, T* scratch, int64_t n) const {
    if (!active_) return dy;
    backward_into(dy, scratch, n);
    return scratch;
  }
  double p() const { return p_; }

 private:
  double p_ = 0.0;
  bool active_ = false;
  Tensor<T> mask_;
};

}  // namespace scalelab
