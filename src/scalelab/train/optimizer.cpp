#include "scalelab/train/optimizer.hpp"

#include <algorithm>
#include <cmath>

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

template <class T>
double clip_grad_norm(const ParameterRefs<T>& params, double max_norm) {
  double sq = 0;
  for (const Parameter<T>* p : params)
    for (T g : p->grad) sq += double(g) * double(g);
  const double norm = std::sqrt(sq);
  if (max_norm > 0 && norm > max_norm) {
    const T factor = static_cast<T>(max_norm / (norm + 1e-12));
    for (Parameter<T>* p : params)
      for (T& g : p->grad) g *= factor;
  }
  return norm;
}

template <class T>
Optimizer<T>::Optimizer(ParameterRefs<T> params, const OptimizerOptions& options)
    : params_(std::move(params)), opt_(options) {
  for (const Parameter<T>* p : params_) {
    m_.emplace_back(p->value.shape());
    v_.emplace_back(p->value.shape());
    m_.back().zero();
    v_.back().zero();
  }
}

template <class T>
void Optimizer<T>::step(double lr) {
  ++t_;
  const double b1 = opt_.beta1, b2 = opt_.beta2;
  const double c1 = 1.0 - std::pow(b1, double(t_)), c2 = 1.0 - std::pow(b2, double(t_));
  for (size_t i = 0; i < params_.size(); ++i) {
    Parameter<T>& p = *params_[i];
    T* w = p.value.data();
    const T* grad = p.grad.data();
    T* m = m_[i].data();
    T* v = v_[i].data();
    const double wd = p.decay ? opt_.weight_decay : 0.0;
    const int64_t n = p.value.numel();
    if (opt_.kind == OptimizerKind::sgd) {
      for (int64_t j = 0; j < n; ++j) w[j] -= static_cast<T>(lr * (grad[j] + wd * w[j]));
      continue;
    }
    const bool decoupled = opt_.kind == OptimizerKind::adamw;
    parallel_for((n + 4095) / 4096, [&](int64_t chunk) {
      const int64_t end = std::min(n, (chunk + 1) * 4096);
      for (int64_t j = chunk * 4096; j < end; ++j) {
        const double g = double(grad[j]) + (decoupled ? 0.0 : wd * w[j]);
        m[j] = static_cast<T>(b1 * m[j] + (1 - b1) * g);
        v[j] = static_cast<T>(b2 * v[j] + (1 - b2) * g * g);
        double update = (m[j] / c1) / (std::sqrt(v[j] / c2) + opt_.eps);
        if (decoupled) update += wd * w[j];
        w[j] -= static_cast<T>(lr * update);
      }
    });
  }
}

template double clip_grad_norm<float>(const ParameterRefs<float>&, double);
template double clip_grad_norm<double>(const ParameterRefs<double>&, double);
template class Optimizer<float>;
template class Optimizer<double>;

}  // namespace scalelab
