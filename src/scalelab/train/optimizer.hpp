// train/optimizer: Adam (L2 in the gradient) and AdamW (decoupled decay), plus global-norm
// clipping and the learning-rate schedules.
//
// Adam(W), per parameter tensor, step t >= 1:
//   g  = grad (+ wd·w for Adam)
//   m  = b1 m + (1 - b1) g,   v = b2 v + (1 - b2) g²
//   w -= lr (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps)   (- lr wd w for AdamW)
#pragma once
#include <string>
#include <vector>

#include "scalelab/nn/parameter.hpp"

namespace scalelab {

enum class OptimizerKind { adam, adamw, sgd };
enum class ScheduleKind { constant, noam, warmup_cosine };

struct OptimizerOptions {
  OptimizerKind kind = OptimizerKind::adam;
  double beta1 = 0.9, beta2 = 0.98, eps = 1e-9;
  double weight_decay = 0.0;
  // muP (Yang et al. 2022, Tensor Programs V, table 3, Adam column): the hidden and output
  // matrices' learning rate is multiplied by mup_base_width / d_model (∝ 1/fan_in); embeddings,
  // positions, biases, norm gains and scalars keep lr. 0: off (every parameter gets lr).
  int64_t mup_base_width = 0;
  int64_t mup_width = 0;  // the model's d_model (filled in from the model config)
};

// The learning-rate multiplier of one parameter under the options above (1 when muP is off).
// A "matrix" is a linear map's weight (is_linear_map: hidden maps and the untied readout); input
// tables (embedding, positions, relative bias), biases, norm gains and scalars are not.
double parameter_lr_multiplier(const OptimizerOptions& options, ParamRole role);

struct ScheduleOptions {
  ScheduleKind kind = ScheduleKind::noam;
  double lr = 1.0;          // noam: the factor; otherwise the peak rate
  int64_t warmup = 4000;
  int64_t total_steps = 0;  // warmup_cosine: decay ends here
  double min_lr = 0.0;      // warmup_cosine floor
  int64_t d_model = 512;    // noam
};

// Learning rate at step t >= 1.
//   noam:          lr · d^-0.5 · min(t^-0.5, t · warmup^-1.5)      (Vaswani et al. 2017, eq. 3)
//   warmup_cosine: lr · t/warmup, then min_lr + (lr - min_lr)(1 + cos(pi·progress))/2
double learning_rate(const ScheduleOptions& s, int64_t step);

// Scales every gradient so that the global L2 norm is at most max_norm (if max_norm > 0).
// Returns the norm before clipping.
template <class T>
double clip_grad_norm(const ParameterRefs<T>& params, double max_norm);

// Per-step Adam constants, folded once so that the element loop is branch-free (optimizer.cpp).
template <class T>
struct AdamConstants {
  T b1, one_minus_b1, b2, one_minus_b2;
  T step_size;    // lr / (1 - b1^t)
  T inv_sqrt_c2;  // 1 / sqrt(1 - b2^t)
  T eps;
  T coupled_decay;    // Adam: wd, added to the gradient
  T decoupled_decay;  // AdamW: lr · wd, applied to the weight
};

template <class T>
class Optimizer {
 public:
  Optimizer(ParameterRefs<T> params, const OptimizerOptions& options);
  void step(double lr);
  int64_t steps() const { return t_; }
  // State for checkpoints: m and v per parameter, named "optimizer.m.<param>" / ".v.".
  std::vector<Tensor<T>>& first_moments() { return m_; }
  std::vector<Tensor<T>>& second_moments() { return v_; }
  void set_steps(int64_t t) { t_ = t; }
  const ParameterRefs<T>& params() const { return params_; }

 private:
  ParameterRefs<T> params_;
  OptimizerOptions opt_;
  std::vector<double> lr_multiplier_;  // per parameter (muP), 1 otherwise
  std::vector<Tensor<T>> m_, v_;
  int64_t t_ = 0;
};

}  // namespace scalelab
