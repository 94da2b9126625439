#include "scalelab/nn/linear.hpp"

#include <algorithm>
#include <type_traits>

#include "scalelab/core/error.hpp"
#include "scalelab/core/parallel.hpp"
#include "scalelab/kernels/gemm.hpp"

namespace scalelab {
namespace {

// sums[o] += sum_r dy[r, o]. Column blocks go to the threads; within a block the rows are added
// in order into a local accumulator (a full block of 64 floats stays in four AVX-512 registers
// instead of a load and a store of sums per row), which is added to sums at the end; so the
// result does not depend on the thread count.
template <class T>
void add_column_sums(const T* __restrict dy, int64_t rows, int64_t cols, T* __restrict sums) {
  constexpr int64_t kBlock = 64;
  parallel_for((cols + kBlock - 1) / kBlock, [&](int64_t blk) {
    const int64_t c0 = blk * kBlock, width = std::min(cols, c0 + kBlock) - c0;
    T acc[kBlock] = {};
    if (width == kBlock) {  // the common case, with a compile-time trip count
      for (int64_t r = 0; r < rows; ++r) {
        const T* __restrict dr = dy + r * cols + c0;
#pragma omp simd
        for (int64_t o = 0; o < kBlock; ++o) acc[o] += dr[o];
      }
    } else {
      for (int64_t r = 0; r < rows; ++r) {
        const T* __restrict dr = dy + r * cols + c0;
#pragma omp simd
        for (int64_t o = 0; o < width; ++o) acc[o] += dr[o];
      }
    }
    for (int64_t o = 0; o < width; ++o) sums[c0 + o] += acc[o];
  });
}

}  // namespace

template <class T>
Linear<T>::Linear(const std::string& name, int64_t in_features, int64_t out_features, bool bias,
                  ParamRole weight_role)
    : in_(in_features),
      out_(out_features),
      has_bias_(bias),
      weight_(name + ".weight", {out_features, in_features}, weight_role) {
  if (bias) bias_ = Parameter<T>(name + ".bias", {out_features}, ParamRole::bias);
}

template <class T>
void Linear<T>::forward(const T* x, int64_t rows, T* y) {
  forward_gemm(x, rows, y, /*relu=*/false);
}

template <class T>
void Linear<T>::forward_relu(const T* x, int64_t rows, T* y) {
  forward_gemm(x, rows, y, /*relu=*/true);
}

template <class T>
void Linear<T>::forward_gemm(const T* x, int64_t rows, T* y, bool relu) {
  saved_x_ = x;
  saved_rows_ = rows;
  // y[rows, out] = act(x[rows, in] · W[out, in]ᵀ + b), the bias and the ReLU inside the GEMM
  const GemmShape shape{.m = rows, .n = out_, .k = in_, .trans_b = true};
  const GemmEpilogue<T> epilogue{.bias = has_bias_ ? bias_.value.data() : nullptr, .relu = relu};
  const T* w = weight_.value.data();
  if constexpr (std::is_same_v<T, float>) {
    // Where the GEMMs run in bf16, x and W are converted once here and serve backward too.
    gemm_operands(shape, {x, x_bf16_.convert(x, rows * in_)}, {w, w_bf16_.convert(w, out_ * in_)},
                  y, 1.0f, 0.0f, epilogue);
  } else {
    gemm_bias_act<T>(shape, x, w, y, epilogue);
  }
}

template <class T>
void Linear<T>::backward(const T* dy, T* dx, bool accumulate_dx, const T* dx_keep_where_positive) {
  SL_CHECK(!(accumulate_dx && dx_keep_where_positive),
           "Linear::backward: a ReLU mask on dx needs dx overwritten, not accumulated");
  const int64_t rows = saved_rows_;
  const T* w = weight_.value.data();
  // dW[out, in] += dy[rows, out]ᵀ · x[rows, in]
  const GemmShape dw_shape{.m = out_, .n = in_, .k = rows, .trans_a = true};
  // dx[rows, in] = dy[rows, out] · W[out, in]   (or += ; or · [a > 0], a ReLU's backward)
  const GemmShape dx_shape{.m = rows, .n = in_, .k = out_};
  const GemmEpilogue<T> dx_epilogue{.keep_where_positive = dx_keep_where_positive};
  const T dx_beta = accumulate_dx ? T(1) : T(0);
  if constexpr (std::is_same_v<T, float>) {
    // dy converted once for both products; x and W as forward converted them.
    thread_local Bf16Copy dy_bf16;
    const FloatOperand dy_operand{dy, dy_bf16.convert(dy, rows * out_)};
    gemm_operands(dw_shape, dy_operand, {saved_x_, x_bf16_.bits()}, weight_.grad.data(), 1.0f,
                  1.0f);
    if (dx)
      gemm_operands(dx_shape, dy_operand, {w, w_bf16_.bits()}, dx, 1.0f, dx_beta, dx_epilogue);
  } else {
    gemm<T>(dw_shape, dy, saved_x_, weight_.grad.data(), T(1), T(1));
    if (dx && dx_keep_where_positive)
      gemm_bias_act<T>(dx_shape, dy, w, dx, dx_epilogue);
    else if (dx)
      gemm<T>(dx_shape, dy, w, dx, T(1), dx_beta);
  }
  if (has_bias_) add_column_sums(dy, rows, out_, bias_.grad.data());  // db[o] += sum_r dy[r, o]
}

template <class T>
ParameterRefs<T> Linear<T>::parameters() {
  ParameterRefs<T> out{&weight_};
  if (has_bias_) out.push_back(&bias_);
  return out;
}

template class Linear<float>;
template class Linear<double>;

}  // namespace scalelab
