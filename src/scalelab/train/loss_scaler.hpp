// train/loss_scaler: dynamic loss scaling for f16 training (Micikevicius et al. 2018; fairseq's
// DynamicLossScaler, Marian's cost scaling, PyTorch's GradScaler follow the same rule).
//
// The loss is multiplied by S before the backward, so small gradients survive f16's underflow;
// the gradients are divided by S before the optimizer step. After each backward:
//   any gradient inf/NaN:  skip the step, S = S · backoff_factor, restart the clean-step count
//   otherwise:             apply the step; after growth_interval clean steps in a row,
//                          S = min(S · growth_factor, max_scale) and restart the count
// S falling below min_scale means the model overflows even unscaled: that is an Error.
#pragma once
#include <cstdint>

namespace scalelab {

struct LossScalerOptions {
  double initial_scale = 32768.0;  // 2^15, fairseq's default
  double growth_factor = 2.0;
  double backoff_factor = 0.5;
  int64_t growth_interval = 2000;  // fairseq: --fp16-scale-window 2000 (PyTorch GradScaler: 2000)
  double min_scale = 0x1p-14;      // fairseq: --min-loss-scale 1e-4
  double max_scale = 0x1p24;
};

// Throws Error naming the field if options are inconsistent.
void validate(const LossScalerOptions& options);

// What a checkpoint keeps so that a resumed run continues with the same scale.
struct LossScalerState {
  double scale = 0;
  int64_t steps = 0, skipped = 0, clean_run = 0;
};

class DynamicLossScaler {
 public:
  explicit DynamicLossScaler(LossScalerOptions options = {});

  double scale() const { return scale_; }
  // Records one backward's outcome; returns true if the optimizer step should be applied.
  bool update(bool found_overflow);

  // Whether any of the n gradients is inf or NaN.
  static bool has_overflow(const float* grads, int64_t n);
  // grads /= scale (after the backward of the scaled loss, before clipping and the step). Call
  // it before update(): a growth in update() changes scale().
  void unscale(float* grads, int64_t n) const;

  int64_t steps() const { return steps_; }
  int64_t skipped_steps() const { return skipped_; }
  int64_t clean_steps_in_a_row() const { return clean_run_; }
  const LossScalerOptions& options() const { return options_; }
  LossScalerState state() const { return {scale_, steps_, skipped_, clean_run_}; }
  // Throws Error if the state is outside the options' range (a checkpoint of another run).
  void restore(const LossScalerState& state);

 private:
  LossScalerOptions options_;
  double scale_;
  int64_t steps_ = 0, skipped_ = 0, clean_run_ = 0;
};

}  // namespace scalelab
