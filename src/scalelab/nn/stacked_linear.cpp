#include "scalelab/nn/stacked_linear.hpp"

#include <cstring>
#include <type_traits>

#include "scalelab/core/error.hpp"
#include "scalelab/kernels/column_sums.hpp"

namespace scalelab {

template <class T>
void StackedLinear<T>::forward(const std::vector<Linear<T>*>& layers, const T* x, int64_t rows,
                               T* y) {
  SL_CHECK(!layers.empty(), "StackedLinear: no layers");
  const int64_t in = layers.front()->in_features();
  const bool has_bias = layers.front()->has_bias();
  int64_t width = 0;
  for (Linear<T>* layer : layers) {
    SL_CHECK(layer->in_features() == in && layer->has_bias() == has_bias, "StackedLinear: ",
             layer->weight().name, " (", layer->in_features(), " inputs, bias ",
             layer->has_bias() ? "yes" : "no", ") cannot be stacked with ",
             layers.front()->weight().name, " (", in, " inputs, bias ", has_bias ? "yes" : "no",
             "): stacked layers read one input and all have a bias or none");
    width += layer->out_features();
  }
  layers_ = layers, in_ = in, has_bias_ = has_bias, width_ = width;
  saved_x_ = x;
  rows_ = rows;
  // W = [W_1; ...; W_P], b = [b_1, ..., b_P]: each layer's rows are a contiguous block
  w_.resize({width_, in_});
  b_.resize({has_bias_ ? width_ : 0});
  int64_t row = 0;
  for (Linear<T>* layer : layers) {
    const Tensor<T>& w = layer->weight().value;
    std::memcpy(w_.data() + row * in_, w.data(), w.bytes());
    if (has_bias_) std::memcpy(b_.data() + row, layer->bias().value.data(), layer->bias().value.bytes());
    row += layer->out_features();
  }
  // Y[rows, S] = x[rows, in] · W[S, in]ᵀ + b, the bias inside the GEMM (as Linear::forward)
  const GemmShape shape{.m = rows, .n = width_, .k = in_, .trans_b = true};
  const GemmEpilogue<T> epilogue{.bias = has_bias_ ? b_.data() : nullptr};
  if constexpr (std::is_same_v<T, float>) {
    const uint16_t* x_bits = x_bf16_.convert(x, rows * in_);
    const uint16_t* w_bits = w_bf16_.convert(w_.data(), width_ * in_);
    gemm_operands(shape, {x, x_bits}, {w_.data(), w_bits}, y, 1.0f, 0.0f, epilogue);
  } else {
    gemm_bias_act<T>(shape, x, w_.data(), y, epilogue);
  }
}

template <class T>
void StackedLinear<T>::backward(const T* dy, T* dx, bool accumulate_dx) {
  SL_CHECK(!layers_.empty(), "StackedLinear::backward before forward");
  // dW[S, in] = dy[rows, S]ᵀ · x[rows, in]
  const GemmShape dw_shape{.m = width_, .n = in_, .k = rows_, .trans_a = true};
  // dx[rows, in] = dy[rows, S] · W[S, in]   (or +=)
  const GemmShape dx_shape{.m = rows_, .n = in_, .k = width_};
  const T dx_beta = accumulate_dx ? T(1) : T(0);
  dw_.resize({width_, in_});
  db_.resize({has_bias_ ? width_ : 0});
  db_.zero();
  // db = colsum(dy), where dy's floats are read anyway (Linear::backward says why)
  const auto bias_gradient = [&] {
    if (has_bias_) add_column_sums(dy, rows_, width_, db_.data());
  };
  if constexpr (std::is_same_v<T, float>) {
    thread_local Bf16Copy dy_bf16;
    bool db_done = false;
    const uint16_t* dy_bits = convert_output_gradient(dy_bf16, dy, rows_, width_,
                                                      has_bias_ ? db_.data() : nullptr, &db_done);
    const FloatOperand dy_operand{dy, dy_bits};
    gemm_operands(dw_shape, dy_operand, {saved_x_, x_bf16_.bits_of(saved_x_, rows_ * in_)},
                  dw_.data(), 1.0f, 0.0f);
    if (dx) gemm_operands(dx_shape, dy_operand, {w_.data(), w_bf16_.bits()}, dx, 1.0f, dx_beta);
    if (!db_done) bias_gradient();
  } else {
    gemm<T>(dw_shape, dy, saved_x_, dw_.data(), T(1), T(0));
    if (dx) gemm<T>(dx_shape, dy, w_.data(), dx, T(1), dx_beta);
    bias_gradient();
  }
  // each layer's block of dW and db added to its gradients
  int64_t row = 0;
  for (Linear<T>* layer : layers_) {
    const int64_t out = layer->out_features();
    T* gw = layer->weight().grad.data();
    const T* src = dw_.data() + row * in_;
    for (int64_t i = 0; i < out * in_; ++i) gw[i] += src[i];
    if (has_bias_) {
      T* gb = layer->bias().grad.data();
      for (int64_t o = 0; o < out; ++o) gb[o] += db_[row + o];
    }
    row += out;
  }
}

template class StackedLinear<float>;
template class StackedLinear<double>;

}  // namespace scalelab
