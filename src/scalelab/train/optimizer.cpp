#include "scalelab/train/optimizer.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "scalelab/core/error.hpp"
#include "scalelab/core/parallel.hpp"

namespace scalelab {

double learning_rate(const ScheduleOptions& s, int64_t step) {
  const double t = static_cast<double>(std::max<int64_t>(step, 1));
  switch (s.kind) {
    case ScheduleKind::constant: return s.lr;
    case ScheduleKind::noam:
      return s.lr / std::sqrt(double(s.d_model)) *
             std::min(1.0 / std::sqrt(t), t * std::pow(double(std::max<int64_t>(s.warmup, 1)), -1.5));
    case ScheduleKind::warmup_cosine: {
      if (step < s.warmup) return s.lr * t / double(s.warmup);
      const double span = std::max<double>(1.0, double(s.total_steps - s.warmup));
      const double progress = std::min(1.0, double(step - s.warmup) / span);
      return s.min_lr + (s.lr - s.min_lr) * 0.5 * (1.0 + std::cos(M_PI * progress));
    }
  }
  return s.lr;
}

namespace {

// The gradients cut into pieces of at most kPieceElements, so that the threads share the work
// evenly however the parameter sizes vary.
constexpr int64_t kPieceElements = 1 << 14;
struct Piece {
  int64_t param, begin, end;
};
template <class T>
std::vector<Piece> gradient_pieces(const ParameterRefs<T>& params) {
  std::vector<Piece> pieces;
  for (size_t i = 0; i < params.size(); ++i)
    for (int64_t b = 0, n = params[i]->grad.numel(); b < n; b += kPieceElements)
      pieces.push_back({static_cast<int64_t>(i), b, std::min(n, b + kPieceElements)});
  return pieces;
}

}  // namespace

// norm = sqrt(sum over all gradient elements of g²), in double. Each piece is summed on its own
// and the pieces are added in order, so the result does not depend on the thread count.
template <class T>
double clip_grad_norm(const ParameterRefs<T>& params, double max_norm) {
  const std::vector<Piece> pieces = gradient_pieces(params);
  std::vector<double> partial(pieces.size());
  parallel_for(static_cast<int64_t>(pieces.size()), [&](int64_t k) {
    const Piece& pc = pieces[k];
    const T* g = params[pc.param]->grad.data();
    double sq = 0;
#pragma omp simd reduction(+ : sq)
    for (int64_t j = pc.begin; j < pc.end; ++j) sq += double(g[j]) * double(g[j]);
    partial[k] = sq;
  });
  double sq = 0;
  for (double x : partial) sq += x;
  const double norm = std::sqrt(sq);
  if (max_norm > 0 && norm > max_norm) {
    const T factor = static_cast<T>(max_norm / (norm + 1e-12));
    parallel_for(static_cast<int64_t>(pieces.size()), [&](int64_t k) {
      const Piece& pc = pieces[k];
      T* g = params[pc.param]->grad.data();
#pragma omp simd
      for (int64_t j = pc.begin; j < pc.end; ++j) g[j] *= factor;
    });
  }
  return norm;
}

double parameter_lr_multiplier(const OptimizerOptions& options, ParamRole role) {
  if (options.mup_base_width <= 0) return 1.0;
  SL_CHECK(options.mup_width > 0, "muP learning rates need the model width (mup_width = ",
           options.mup_width, ")");
  if (!is_linear_map(role)) return 1.0;
  return double(options.mup_base_width) / double(options.mup_width);
}

template <class T>
Optimizer<T>::Optimizer(ParameterRefs<T> params, const OptimizerOptions& options)
    : params_(std::move(params)), opt_(options) {
  for (const Parameter<T>* p : params_) {
    lr_multiplier_.push_back(parameter_lr_multiplier(opt_, p->role));
    m_.emplace_back(p->value.shape());
    v_.emplace_back(p->value.shape());
    m_.back().zero();
    v_.back().zero();
  }
}

// Adam as PyTorch 1.13 writes it: m <- b1 m + (1 - b1) g; v <- b2 v + (1 - b2) g²;
// w <- w - (lr / c1) · m / (sqrt(v) / sqrt(c2) + eps), with c_i = 1 - b_i^t; AdamW adds lr·wd·w
// to the step (decoupled), Adam adds wd·w to g. The per-element math runs in T with the
// constants folded once per step, so that the loop vectorises: it is memory-bound, touching
// w, g, m and v once each.
template <class T>
void adam_update(const AdamConstants<T>& k, T* __restrict w, const T* __restrict grad,
                 T* __restrict m, T* __restrict v, int64_t begin, int64_t end) {
#pragma omp simd
  for (int64_t j = begin; j < end; ++j) {
    const T g = grad[j] + k.coupled_decay * w[j];
    const T mj = k.b1 * m[j] + k.one_minus_b1 * g;
    const T vj = k.b2 * v[j] + k.one_minus_b2 * g * g;
    m[j] = mj;
    v[j] = vj;
    w[j] -= k.step_size * mj / (std::sqrt(vj) * k.inv_sqrt_c2 + k.eps) + k.decoupled_decay * w[j];
  }
}

// One parallel region over the pieces of every parameter (gradient_pieces), not one per parameter:
// a model of small matrices and biases has mostly one-piece parameters, and a region per parameter
// ran them on one thread while the other waited. Each element is updated alone: the result does
// not depend on the split.
template <class T>
void Optimizer<T>::step(double lr) {
  ++t_;
  const double b1 = opt_.beta1, b2 = opt_.beta2;
  const double c1 = 1.0 - std::pow(b1, double(t_)), c2 = 1.0 - std::pow(b2, double(t_));
  const bool decoupled = opt_.kind == OptimizerKind::adamw;
  std::vector<AdamConstants<T>> constants(params_.size());
  std::vector<double> sgd_lr(params_.size()), sgd_wd(params_.size());
  for (size_t i = 0; i < params_.size(); ++i) {
    const double lr_i = lr * lr_multiplier_[i];
    const double wd = takes_weight_decay(params_[i]->role) ? opt_.weight_decay : 0.0;
    sgd_lr[i] = lr_i, sgd_wd[i] = wd;
    constants[i] = AdamConstants<T>{.b1 = T(b1),
                                    .one_minus_b1 = T(1 - b1),
                                    .b2 = T(b2),
                                    .one_minus_b2 = T(1 - b2),
                                    .step_size = T(lr_i / c1),
                                    .inv_sqrt_c2 = T(1 / std::sqrt(c2)),
                                    .eps = T(opt_.eps),
                                    .coupled_decay = T(decoupled ? 0.0 : wd),
                                    .decoupled_decay = T(decoupled ? lr_i * wd : 0.0)};
  }
  const std::vector<Piece> pieces = gradient_pieces(params_);
  parallel_for(static_cast<int64_t>(pieces.size()), [&](int64_t k) {
    const Piece& pc = pieces[k];
    Parameter<T>& p = *params_[pc.param];
    T* w = p.value.data();
    const T* grad = p.grad.data();
    if (opt_.kind == OptimizerKind::sgd) {
      const double lr_i = sgd_lr[pc.param], wd = sgd_wd[pc.param];
      for (int64_t j = pc.begin; j < pc.end; ++j) w[j] -= static_cast<T>(lr_i * (grad[j] + wd * w[j]));
      return;
    }
    adam_update(constants[pc.param], w, grad, m_[pc.param].data(), v_[pc.param].data(), pc.begin,
                pc.end);
  });
}

template double clip_grad_norm<float>(const ParameterRefs<float>&, double);
template double clip_grad_norm<double>(const ParameterRefs<double>&, double);

template class Optimizer<float>;
template class Optimizer<double>;

}  // namespace scalelab
