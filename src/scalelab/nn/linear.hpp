// nn/linear: y = x Wᵀ + b, with W stored [out, in] (PyTorch's layout, so checkpoints compare
// directly).
#pragma once
#include "scalelab/kernels/gemm.hpp"
#include "scalelab/nn/parameter.hpp"

namespace scalelab {

// dy's bf16 copy for a layer's backward products, where the float GEMMs keep copies (Bf16Copy;
// null elsewhere), made in one pass over dy with the bias gradient db += colsum(dy)
// (add_column_sums_and_bf16) when db is given; *db_done says whether db was updated (without a
// copy it is not: the caller sums dy where the products have just read it).
const uint16_t* convert_output_gradient(Bf16Copy& copy, const float* dy, int64_t rows,
                                        int64_t cols, float* db, bool* db_done);

template <class T>
class Linear {
 public:
  Linear() = default;
  Linear(const std::string& name, int64_t in_features, int64_t out_features, bool bias = true,
         ParamRole weight_role = ParamRole::weight);

  // x: [rows, in] (kept by pointer until backward), y: [rows, out].
  // Where the float GEMMs run in bf16 (kernels/gemm.hpp, Bf16Copy), x is converted once and the
  // copy serves backward too; x_copy, when given and a copy of this x (bits_of), is used instead
  // of converting x again: another layer's input_copy() of the same input, or a copy the GEMM
  // that wrote x made (y_copy below).
  void forward(const T* x, int64_t rows, T* y, const Bf16Copy* x_copy = nullptr);
  // y = relu(x Wᵀ + b): the bias and the ReLU fused into the GEMM (kernels/gemm.hpp,
  // gemm_bias_act; forward fuses the bias the same way). The caller keeps y for the ReLU's backward.
  // y_copy: where copies are kept, the GEMM also writes y's bf16 copy there, band by band.
  void forward_relu(const T* x, int64_t rows, T* y, Bf16Copy* y_copy = nullptr);
  // dW += dyᵀ x, db += colsum(dy); dx = dy W (or += when accumulate_dx). dx may be null.
  // With dx_keep_where_positive = a [rows, in] (not with accumulate_dx): dx = (dy W) · [a > 0],
  // the backward of a ReLU whose output a fed this layer, fused with the GEMM (gemm_bias_act).
  // dx_copy: where copies are kept, the dx GEMM also writes dx's bf16 copy there; dy_copy: dy's
  // copy, if one was made (used where it is a copy of this dy).
  void backward(const T* dy, T* dx, bool accumulate_dx = false,
                const T* dx_keep_where_positive = nullptr, Bf16Copy* dx_copy = nullptr,
                const Bf16Copy* dy_copy = nullptr);
  // Where copies are kept (Bf16Copy::reserve is not null), tensors held only as bf16 bits
  // (gemm_bf16_out: half the bytes of a float tensor and its copy, no float pass over them):
  //   forward_relu_to_bf16: y = bf16(relu(x Wᵀ + b)) into y_bits, no float y;
  //   forward / backward with x, dy null: x, dy read from their bits-only copies (x_copy, dy_copy
  //     hold bits_of(nullptr, n)); db += colsum(dy) then sums the bits (add_column_sums_bf16);
  //   backward_to_bf16: backward with dx = bf16(dy W) · [a > 0] into dx_bits, a given by its bits.
  void forward_relu_to_bf16(const T* x, int64_t rows, Bf16Copy& y_bits);
  void backward_to_bf16(const T* dy, Bf16Copy& dx_bits, const uint16_t* keep_where_positive);
  // The bf16 copy of the last forward's input (this layer's own or the one it was given; null
  // before the first forward).
  const Bf16Copy* input_copy() const { return x_copy_; }

  ParameterRefs<T> parameters();
  Parameter<T>& weight() { return weight_; }
  Parameter<T>& bias() { return bias_; }
  bool has_bias() const { return has_bias_; }
  int64_t in_features() const { return in_; }
  int64_t out_features() const { return out_; }

 private:
  int64_t in_ = 0, out_ = 0;
  bool has_bias_ = true;
  Parameter<T> weight_, bias_;
  const T* saved_x_ = nullptr;
  int64_t saved_rows_ = 0;
  // x's and W's bf16 copies from the last forward, for backward (float GEMMs in bf16 only);
  // x_copy_: the copy of x in use, x_bf16_ or the one forward was given (set by every float
  // forward; null before the first).
  Bf16Copy x_bf16_, w_bf16_;
  const Bf16Copy* x_copy_ = nullptr;

  void forward_gemm(const T* x, int64_t rows, T* y, bool relu, const Bf16Copy* x_copy,
                    Bf16Copy* y_copy, Bf16Copy* y_bits_only = nullptr);
  // backward's products; dx_bits_only: dx held only as bits (backward_to_bf16)
  void backward_products(const T* dy, T* dx, bool accumulate_dx, const T* dx_keep_where_positive,
                         Bf16Copy* dx_copy, const Bf16Copy* dy_copy, Bf16Copy* dx_bits_only,
                         const uint16_t* dx_keep_bits);
};

}  // namespace scalelab
