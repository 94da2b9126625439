#include "scalelab/nn/norm.hpp"

namespace scalelab {

template <class T>
LayerNorm<T>::LayerNorm(const std::string& name, int64_t dim, double eps)
    : dim_(dim),
      eps_(eps),
      weight_(name + ".weight", {dim}, /*weight_decay=*/false),
      bias_(name + ".bias", {dim}, /*weight_decay=*/false) {
  weight_.value.fill(T(1));
}

template <class T>
void LayerNorm<T>::forward(const T* x, int64_t rows, T* y) {
  saved_x_ = x;
  saved_rows_ = rows;
  mean_.resize({rows});
  rstd_.resize({rows});
  layernorm_forward<T>({rows, dim_, eps_}, x, weight_.value.data(), bias_.value.data(), y,
                       mean_.data(), rstd_.data());
}

template <class T>
void LayerNorm<T>::backward(const T* dy, T* dx, bool accumulate_dx) {
  const NormShape s{saved_rows_, dim_, eps_};
  T* target = dx;
  if (accumulate_dx) {
    scratch_.resize({saved_rows_, dim_});
    target = scratch_.data();
  }
  layernorm_backward<T>(s, dy, saved_x_, weight_.value.data(), mean_.data(), rstd_.data(), target,
                        weight_.grad.data(), bias_.grad.data());
  if (accumulate_dx) {
    for (int64_t i = 0; i < saved_rows_ * dim_; ++i) dx[i] += target[i];
  }
}

template class LayerNorm<float>;
template class LayerNorm<double>;

}  // namespace scalelab
