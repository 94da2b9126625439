// nn/dropout: inverted dropout. y = x · m / (1 - p) with m ~ Bernoulli(1 - p), identity when not
// training or p = 0. The mask comes from the caller's Rng, so a seed fixes every mask.
//
// The mask is counter-based: one 64-bit key is drawn from the Rng per call, and element i's draw is
// the SplitMix64 finaliser of (key + ⌊i/2⌋·γ), whose two 32-bit halves serve elements 2j and 2j+1.
// So element i's mask depends on (key, i) only: it can be made on any number of threads, in any
// order, with the same result, and costs half a hash per element (a draw per element before).
// An element is dropped when its 32-bit draw u < round(p · 2³²): P(drop) = p within 2⁻³².
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "scalelab/core/parallel.hpp"
#include "scalelab/core/rng.hpp"
#include "scalelab/core/tensor.hpp"

namespace scalelab {

// The SplitMix64 output function applied to key + counter·γ (core/rng.hpp's generator at an
// arbitrary position of its stream).
inline uint64_t counter_hash(uint64_t key, uint64_t counter) {
  uint64_t z = key + (counter + 1) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

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
    const uint64_t key = rng->next_u64();
    const uint64_t drop_below = static_cast<uint64_t>(std::llround(p_ * 0x1.0p32));  // ≤ 2³²
    const T keep_scale = T(1) / T(1 - p_);
    T* mask = mask_.data();
    // Pairs of elements per hash; chunks of 4096 pairs per task keep the fork/join cost small.
    constexpr int64_t kPairsPerChunk = 4096;
    const int64_t pairs = (n + 1) / 2;
    parallel_for((pairs + kPairsPerChunk - 1) / kPairsPerChunk, [&](int64_t chunk) {
      const int64_t end = std::min(pairs, (chunk + 1) * kPairsPerChunk);
      for (int64_t j = chunk * kPairsPerChunk; j < end; ++j) {
        const uint64_t h = counter_hash(key, static_cast<uint64_t>(j));
        const int64_t i = 2 * j;
        mask[i] = (h & 0xFFFFFFFFull) < drop_below ? T(0) : keep_scale;
        x[i] *= mask[i];
        if (i + 1 < n) {
          mask[i + 1] = (h >> 32) < drop_below ? T(0) : keep_scale;
          x[i + 1] *= mask[i + 1];
        }
      }
    });
  }
  // In place on dy[n]: dx = dy · m / (1 - p)  (from y = x · m / (1 - p)).
  void backward(T* dy, int64_t n) const {
    if (!active_) return;
    const T* mask = mask_.data();
    for (int64_t i = 0; i < n; ++i) dy[i] *= mask[i];
  }
  double p() const { return p_; }

 private:
  double p_ = 0.0;
  bool active_ = false;
  Tensor<T> mask_;
};

}  // namespace scalelab
