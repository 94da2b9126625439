#include "scalelab/nn/linear.hpp"

#include <algorithm>

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
  saved_x_ = x;
  saved_rows_ = rows;
  // y[rows, out] = x[rows, in] · W[out, in]ᵀ + b   (the bias added inside the GEMM)
  gemm_bias_act<T>({.m = rows, .n = out_, .k = in_, .trans_b = true}, x, weight_.value.data(), y,
                   {.bias = has_bias_ ? bias_.value.data() : nullptr});
}

template <class T>
void Linear<T>::forward_relu(const T* x, int64_t rows, T* y) {
  saved_x_ = x;
  saved_rows_ = rows;
  // y = max(x Wᵀ + b, 0), the bias and the ReLU inside the GEMM
  gemm_bias_act<T>({.m = rows, .n = out_, .k = in_, .trans_b = true}, x, weight_.value.data(), y,
                   {.bias = has_bias_ ? bias_.value.data() : nullptr, .relu = true});
}

template <class T>
void Linear<T>::backward(const T* dy, T* dx, bool accumulate_dx, const T* dx_keep_where_positive) {
  SL_CHECK(!(accumulate_dx && dx_keep_where_positive),
           "Linear::backward: a ReLU mask on dx needs dx overwritten, not accumulated");
  const int64_t rows = saved_rows_;
  // dW[out, in] += dy[rows, out]ᵀ · x[rows, in]
  gemm<T>({.m = out_, .n = in_, .k = rows, .trans_a = true}, dy, saved_x_, weight_.grad.data(),
          T(1), T(1));
  if (has_bias_) add_column_sums(dy, rows, out_, bias_.grad.data());  // db[o] += sum_r dy[r, o]
  // dx[rows, in] = dy[rows, out] · W[out, in]
  if (dx && dx_keep_where_positive) {  // dx = (dy W) · [a > 0]
    gemm_bias_act<T>({.m = rows, .n = in_, .k = out_}, dy, weight_.value.data(), dx,
                     {.keep_where_positive = dx_keep_where_positive});
  } else if (dx) {
    gemm<T>({.m = rows, .n = in_, .k = out_}, dy, weight_.value.data(), dx, T(1),
            accumulate_dx ? T(1) : T(0));
  }
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
