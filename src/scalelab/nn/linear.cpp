#include "scalelab/nn/linear.hpp"

#include <type_traits>

#include "scalelab/core/error.hpp"
#include "scalelab/kernels/column_sums.hpp"
#include "scalelab/kernels/gemm.hpp"

namespace scalelab {

const uint16_t* convert_output_gradient(Bf16Copy& copy, const float* dy, int64_t rows,
                                        int64_t cols, float* db, bool* db_done) {
  *db_done = false;
  if (!db) return copy.convert(dy, rows * cols);
  uint16_t* bits = copy.reserve(dy, rows * cols);
  if (bits) {
    add_column_sums_and_bf16(dy, rows, cols, db, bits);
    *db_done = true;
  }
  return bits;
}

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
void Linear<T>::forward(const T* x, int64_t rows, T* y, const Bf16Copy* x_copy) {
  forward_gemm(x, rows, y, /*relu=*/false, x_copy, nullptr);
}

template <class T>
void Linear<T>::forward_relu(const T* x, int64_t rows, T* y, Bf16Copy* y_copy) {
  forward_gemm(x, rows, y, /*relu=*/true, nullptr, y_copy);
}

template <class T>
void Linear<T>::forward_relu_to_bf16(const T* x, int64_t rows, Bf16Copy& y_bits) {
  forward_gemm(x, rows, nullptr, /*relu=*/true, nullptr, nullptr, &y_bits);
}

template <class T>
void Linear<T>::forward_gemm(const T* x, int64_t rows, T* y, bool relu, const Bf16Copy* x_copy,
                             Bf16Copy* y_copy, Bf16Copy* y_bits_only) {
  saved_x_ = x;
  saved_rows_ = rows;
  // y[rows, out] = act(x[rows, in] · W[out, in]ᵀ + b), the bias and the ReLU inside the GEMM
  const GemmShape shape{.m = rows, .n = out_, .k = in_, .trans_b = true};
  GemmEpilogue<T> epilogue{.bias = has_bias_ ? bias_.value.data() : nullptr, .relu = relu};
  const T* w = weight_.value.data();
  if constexpr (std::is_same_v<T, float>) {
    // Where the GEMMs run in bf16, x and W are converted once here (or x's copy is given) and
    // serve backward too.
    const uint16_t* x_bits = x_copy ? x_copy->bits_of(x, rows * in_) : nullptr;
    SL_CHECK(x || x_bits, "Linear::forward: x has neither values nor a bf16 copy");
    x_copy_ = x_bits ? x_copy : &x_bf16_;
    if (!x_bits) x_bits = x_bf16_.convert(x, rows * in_);
    const FloatOperand w_operand{w, w_bf16_.convert(w, out_ * in_)};
    if (y_bits_only) {
      uint16_t* y_bits = y_bits_only->reserve(nullptr, rows * out_);
      SL_CHECK(y_bits, "Linear::forward: a bf16-only output where the GEMMs keep no bf16 copies");
      gemm_bf16_out(shape, {x, x_bits}, w_operand, y_bits, {.bias = epilogue.bias, .relu = relu});
      return;
    }
    if (y_copy) epilogue.bf16_out = y_copy->reserve(y, rows * out_);
    gemm_operands(shape, {x, x_bits}, w_operand, y, 1.0f, 0.0f, epilogue);
  } else {
    SL_CHECK(!y_bits_only, "Linear::forward: bf16-only outputs are for float layers");
    gemm_bias_act<T>(shape, x, w, y, epilogue);
  }
}

template <class T>
void Linear<T>::backward(const T* dy, T* dx, bool accumulate_dx, const T* dx_keep_where_positive,
                         Bf16Copy* dx_copy, const Bf16Copy* dy_copy) {
  backward_products(dy, dx, accumulate_dx, dx_keep_where_positive, dx_copy, dy_copy, nullptr,
                    nullptr);
}

template <class T>
void Linear<T>::backward_to_bf16(const T* dy, Bf16Copy& dx_bits,
                                 const uint16_t* keep_where_positive) {
  backward_products(dy, nullptr, false, nullptr, nullptr, nullptr, &dx_bits, keep_where_positive);
}

template <class T>
void Linear<T>::backward_products(const T* dy, T* dx, bool accumulate_dx,
                                  const T* dx_keep_where_positive, Bf16Copy* dx_copy,
                                  const Bf16Copy* dy_copy, Bf16Copy* dx_bits_only,
                                  const uint16_t* dx_keep_bits) {
  SL_CHECK(!(accumulate_dx && dx_keep_where_positive),
           "Linear::backward: a ReLU mask on dx needs dx overwritten, not accumulated");
  const int64_t rows = saved_rows_;
  const T* w = weight_.value.data();
  // dW[out, in] += dy[rows, out]ᵀ · x[rows, in]
  const GemmShape dw_shape{.m = out_, .n = in_, .k = rows, .trans_a = true};
  // dx[rows, in] = dy[rows, out] · W[out, in]   (or += ; or · [a > 0], a ReLU's backward)
  const GemmShape dx_shape{.m = rows, .n = in_, .k = out_};
  GemmEpilogue<T> dx_epilogue{.keep_where_positive = dx_keep_where_positive};
  const T dx_beta = accumulate_dx ? T(1) : T(0);
  // db[o] += sum_r dy[r, o], run where dy's floats are read anyway: in the pass that converts them
  // to bf16, or after the products that read them. (After products that read the bf16 copy, the
  // floats had left the cache: the sums took 2.3x the time in the small model's bf16 step.)
  const auto bias_gradient = [&] {
    if (has_bias_) add_column_sums(dy, rows, out_, bias_.grad.data());
  };
  if constexpr (std::is_same_v<T, float>) {
    // dy converted once for both products (unless its copy is given); x and W as forward had them.
    thread_local Bf16Copy dy_bf16;
    const uint16_t* dy_bits = dy_copy ? dy_copy->bits_of(dy, rows * out_) : nullptr;
    SL_CHECK(dy || dy_bits, "Linear::backward: dy has neither values nor a bf16 copy");
    bool db_done = false;
    if (!dy_bits)
      dy_bits = convert_output_gradient(dy_bf16, dy, rows, out_,
                                        has_bias_ ? bias_.grad.data() : nullptr, &db_done);
    if (!dy) {  // dy held only as bits: the sums of its bf16 values
      if (has_bias_) add_column_sums_bf16(dy_bits, rows, out_, bias_.grad.data());
      db_done = true;
    } else if (dy_bits && !db_done) {  // dy's copy was given
      bias_gradient();
      db_done = true;
    }
    const FloatOperand dy_operand{dy, dy_bits};
    const uint16_t* x_bits = x_copy_ ? x_copy_->bits_of(saved_x_, rows * in_) : nullptr;
    gemm_operands(dw_shape, dy_operand, {saved_x_, x_bits},
                  weight_.grad.data(), 1.0f, 1.0f);
    if (dx_bits_only) {
      uint16_t* bits = dx_bits_only->reserve(nullptr, rows * in_);
      SL_CHECK(bits, "Linear::backward: a bf16-only dx where the GEMMs keep no bf16 copies");
      gemm_bf16_out(dx_shape, dy_operand, {w, w_bf16_.bits()}, bits,
                    {.keep_where_positive = dx_keep_bits});
    }
    if (dx && dx_copy) dx_epilogue.bf16_out = dx_copy->reserve(dx, rows * in_);
    if (dx)
      gemm_operands(dx_shape, dy_operand, {w, w_bf16_.bits()}, dx, 1.0f, dx_beta, dx_epilogue);
    if (!db_done) bias_gradient();
  } else {
    SL_CHECK(!dx_bits_only, "Linear::backward: bf16-only gradients are for float layers");
    gemm<T>(dw_shape, dy, saved_x_, weight_.grad.data(), T(1), T(1));
    if (dx && dx_keep_where_positive)
      gemm_bias_act<T>(dx_shape, dy, w, dx, dx_epilogue);
    else if (dx)
      gemm<T>(dx_shape, dy, w, dx, T(1), dx_beta);
    bias_gradient();
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
