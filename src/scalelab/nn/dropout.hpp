// nn/dropout: inverted dropout. y = x · m / (1 - p) with m ~ Bernoulli(1 - p), identity when not
// training or p = 0. The mask comes from the caller's Rng, so a seed fixes every mask.
#pragma once
#include "scalelab/core/rng.hpp"
#include "scalelab/core/tensor.hpp"

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
    const T keep_scale = T(1) / T(1 - p_);
    for (int64_t i = 0; i < n; ++i) {
      mask_[i] = rng->uniform() < p_ ? T(0) : keep_scale;
      x[i] *= mask_[i];
    }
  }
  // In place on dy[n]: dx = dy · m / (1 - p)  (from y = x · m / (1 - p)).
  void backward(T* dy, int64_t n) const {
    if (!active_) return;
    for (int64_t i = 0; i < n; ++i) dy[i] *= mask_[i];
  }
  double p() const { return p_; }

 private:
  double p_ = 0.0;
  bool active_ = false;
  Tensor<T> mask_;
};

}  // namespace scalelab
