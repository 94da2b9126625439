#include "scalelab/nn/norm.hpp"

#include "scalelab/core/parallel.hpp"
#include "scalelab/kernels/rmsnorm.hpp"

namespace scalelab {

template <class T>
Norm<T>::Norm(const std::string& name, int64_t dim, NormKind kind, double eps, bool learned)
    : dim_(dim),
      kind_(kind),
      eps_(eps),
      learned_(learned),
      weight_(name + ".weight", {dim}, ParamRole::norm_gain),
      bias_(name + ".bias", {kind == NormKind::layer ? dim : 0}, ParamRole::norm_bias) {
  weight_.value.fill(T(1));
}

template <class T>
void Norm<T>::forward(const T* x, int64_t rows, T* y) {
  saved_x_ = x;
  saved_rows_ = rows;
  rstd_.resize({rows});
  const NormShape s{rows, dim_, eps_};
  if (kind_ == NormKind::layer) {
    mean_.resize({rows});
    layernorm_forward<T>(s, x, weight_.value.data(), bias_.value.data(), y, mean_.data(), rstd_.data());
  } else {
    rmsnorm_forward<T>(s, x, weight_.value.data(), y, rstd_.data());
  }
}

template <class T>
void Norm<T>::backward(const T* dy, T* dx, bool accumulate_dx) {
  if (accumulate_dx) backward_add(dy, dx, dx);
  else backward_into(dy, dx);
}

template <class T>
void Norm<T>::backward_add(const T* dy, const T* residual, T* dx) {
  scratch_.resize({saved_rows_, dim_});
  backward_into(dy, scratch_.data());
  const T* from = scratch_.data();
  parallel_elements(saved_rows_ * dim_, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) dx[i] = residual[i] + from[i];
  });
}

template <class T>
void Norm<T>::backward_into(const T* dy, T* dx) {
  const NormShape s{saved_rows_, dim_, eps_};
  if (kind_ == NormKind::layer) {
    layernorm_backward<T>(s, dy, saved_x_, weight_.value.data(), mean_.data(), rstd_.data(), dx,
                          weight_.grad.data(), bias_.grad.data());
  } else {
    rmsnorm_backward<T>(s, dy, saved_x_, weight_.value.data(), rstd_.data(), dx, weight_.grad.data());
  }
}

template <class T>
ParameterRefs<T> Norm<T>::parameters() {
  if (!learned_) return {};
  if (kind_ == NormKind::rms) return {&weight_};
  return {&weight_, &bias_};
}

template class Norm<float>;
template class Norm<double>;

}  // namespace scalelab
