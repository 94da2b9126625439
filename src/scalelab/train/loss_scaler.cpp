#include "scalelab/train/loss_scaler.hpp"

#include <algorithm>
#include <cmath>

#include "scalelab/core/error.hpp"

namespace scalelab {

void validate(const LossScalerOptions& o) {
  SL_CHECK(o.min_scale > 0 && o.min_scale <= o.initial_scale && o.initial_scale <= o.max_scale,
           "loss scaling needs 0 < min_scale <= initial_scale <= max_scale; got min_scale = ",
           o.min_scale, ", initial_scale = ", o.initial_scale, ", max_scale = ", o.max_scale);
  SL_CHECK(o.growth_factor > 1, "loss scaling growth_factor = ", o.growth_factor,
           " must be > 1");
  SL_CHECK(o.backoff_factor > 0 && o.backoff_factor < 1, "loss scaling backoff_factor = ",
           o.backoff_factor, " must be in (0, 1)");
  SL_CHECK(o.growth_interval >= 1, "loss scaling growth_interval = ", o.growth_interval,
           " must be >= 1");
}

DynamicLossScaler::DynamicLossScaler(LossScalerOptions options)
    : options_(options), scale_(options.initial_scale) {
  validate(options_);
}

bool DynamicLossScaler::update(bool found_overflow) {
  steps_ += 1;
  if (found_overflow) {
    skipped_ += 1;
    clean_run_ = 0;
    scale_ *= options_.backoff_factor;
    SL_CHECK(scale_ >= options_.min_scale, "loss scale fell to ", scale_, " below min_scale = ",
             options_.min_scale, " after ", steps_, " steps (", skipped_,
             " skipped): the gradients overflow even unscaled");
    return false;
  }
  clean_run_ += 1;
  if (clean_run_ >= options_.growth_interval) {
    scale_ = std::min(scale_ * options_.growth_factor, options_.max_scale);
    clean_run_ = 0;
  }
  return true;
}

void DynamicLossScaler::restore(const LossScalerState& st) {
  SL_CHECK(st.scale >= options_.min_scale && st.scale <= options_.max_scale && st.steps >= 0 &&
               st.skipped >= 0 && st.skipped <= st.steps && st.clean_run >= 0,
           "loss scaler state out of range: scale = ", st.scale, ", steps = ", st.steps,
           ", skipped = ", st.skipped, ", clean run = ", st.clean_run);
  scale_ = st.scale;
  steps_ = st.steps;
  skipped_ = st.skipped;
  clean_run_ = st.clean_run;
}

bool DynamicLossScaler::has_overflow(const float* grads, int64_t n) {
  // x - x is 0 for finite x and NaN for inf or NaN: one branch-free pass.
  float acc = 0.0f;
  for (int64_t i = 0; i < n; ++i) acc += grads[i] - grads[i];
  return acc != 0.0f;
}

void DynamicLossScaler::unscale(float* grads, int64_t n) const {
  const float inv = static_cast<float>(1.0 / scale_);
  for (int64_t i = 0; i < n; ++i) grads[i] *= inv;
}

}  // namespace scalelab
