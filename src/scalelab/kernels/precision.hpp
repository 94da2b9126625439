// kernels/precision: number formats f32, bf16, f16 with emulated arithmetic, and per-op overflow
// accounting.
//
// Emulation: every operation is computed in double and the result is rounded to the format with
// round-to-nearest-even, including gradual underflow (subnormals) and overflow to ±inf. Products
// of two f32 values are exact in double; for +, -, ×, ÷ and sqrt the double result rounded again to
// the format equals the correctly rounded result because double has p' = 53 >= 2p + 2 bits for
// p = 24 (f32), 11 (f16), 8 (bf16) (Figueroa 1995: the double rounding is innocuous). exp and log
// are rounded from the double libm
// value. No fused multiply-add is used in emulated code: a·b + c is two roundings.
//
// Formats:            p (bits incl. implicit)  min normal   max finite
//   f32                24                      2^-126       (2 - 2^-23)·2^127
//   bf16                8                      2^-126       (2 - 2^-7)·2^127  ≈ 3.39e38
//   f16                11                      2^-14        65504
#pragma once
#include <array>
#include <cstdint>
#include <string>

namespace scalelab {

enum class DType { f32, bf16, f16 };
const char* dtype_name(DType dtype);
// "f32" | "bf16" | "f16" (also "float32", "bfloat16", "float16"); throws Error otherwise.
DType parse_dtype(const std::string& name);

struct FormatLimits {
  int precision_bits;   // p, including the implicit leading bit
  int min_exponent;     // exponent of the smallest normal number
  double min_normal;    // 2^min_exponent
  double min_subnormal; // 2^(min_exponent - p + 1)
  double max_finite;
};
FormatLimits format_limits(DType dtype);

// x rounded to the format, round-to-nearest-even; |x| beyond max_finite + ulp/2 gives ±inf;
// NaN stays NaN. Exact for any double input.
double round_to(DType dtype, double x);

// Bit patterns (IEEE binary16 and bfloat16), rounding to nearest even.
uint16_t f32_to_f16_bits(float x);
float f16_bits_to_f32(uint16_t bits);
uint16_t f32_to_bf16_bits(float x);
float bf16_bits_to_f32(uint16_t bits);

// The operations whose results are counted (claims E6, A9, B4).
enum class PrecisionOp {
  input_cast,           // a value stored into the format
  embedding_scale,      // x · embedding scale
  q_scale,              // q · scale before q·kᵀ
  qk_matmul,            // q·kᵀ
  logit_scale,          // (q·kᵀ) · scale after the product
  softmax_max_sub,      // s - max s
  softmax_exp,          // e^(...)
  softmax_sum,          // sum_j e_j
  softmax_div,          // e_j / sum
  pv_matmul,            // p·v
  layernorm_sum,        // sum_j x_j (the mean)
  layernorm_var,        // (x - mean)², their sum, the variance
  layernorm_normalize,  // (x - mean) · rstd · gamma + beta
  residual_add,         // x + f(x)
  gemm,                 // a linear layer's products and sums
  loss_scale,           // loss · scale and gradients · scale
  activation_grad,      // a gradient passed between layers in the backward (training)
  weight_grad,          // a parameter's gradient (training)
};
constexpr int kPrecisionOps = 18;
const char* precision_op_name(PrecisionOp op);

// What happened to the results of one op.
struct OpCounts {
  int64_t results = 0;    // values produced
  int64_t overflow = 0;   // finite exact value, ±inf after rounding
  int64_t nan = 0;        // NaN results (e.g. inf - inf, inf / inf)
  int64_t underflow = 0;  // non-zero exact value, 0 after rounding
  int64_t subnormal = 0;  // non-zero result below the smallest normal number
  double max_abs = 0;     // largest finite |result|
};

struct OverflowCounters {
  std::array<OpCounts, kPrecisionOps> ops{};
  OpCounts& operator[](PrecisionOp op) { return ops[static_cast<int>(op)]; }
  const OpCounts& operator[](PrecisionOp op) const { return ops[static_cast<int>(op)]; }
  void merge(const OverflowCounters& other);
  int64_t total_overflow() const;
  int64_t total_nan() const;
  // One line per op with any result: "qk_matmul: 4096 results, 12 overflow, ...".
  std::string summary() const;
};

// Rounds an exact value to the format and records the result under op (counters may be null).
float round_counted(DType dtype, double exact, PrecisionOp op, OverflowCounters* counters);

// Arithmetic in one format: each result is rounded and counted.
struct Emulated {
  DType dtype = DType::f32;
  OverflowCounters* counters = nullptr;

  float cast(double x, PrecisionOp op = PrecisionOp::input_cast) const {
    return round_counted(dtype, x, op, counters);
  }
  float add(float a, float b, PrecisionOp op) const { return cast(double(a) + double(b), op); }
  float sub(float a, float b, PrecisionOp op) const { return cast(double(a) - double(b), op); }
  float mul(float a, float b, PrecisionOp op) const { return cast(double(a) * double(b), op); }
  float div(float a, float b, PrecisionOp op) const { return cast(double(a) / double(b), op); }
  float exp(float a, PrecisionOp op) const;
  float sqrt(float a, PrecisionOp op) const;
};

// sum_e a[e·sa] b[e·sb] with inputs in the format. accumulate = f32: products and the running sum
// in f32 (f16·f16 and bf16·bf16 products are exact in f32), one rounding to dtype at the end;
// accumulate = dtype: every product and every partial sum rounded to dtype. Counted under op.
float emulated_dot(DType dtype, DType accumulate, const float* a, int64_t sa, const float* b,
                   int64_t sb, int64_t n, PrecisionOp op, OverflowCounters* counters);

// Element-wise helpers for the engine's layers (all results rounded to dtype and counted):
// x[i] = round(x[i]) in place;
void emulated_cast(DType dtype, float* x, int64_t n, PrecisionOp op, OverflowCounters* counters);
// out[i] = a[i] + b[i];
void emulated_add(DType dtype, const float* a, const float* b, float* out, int64_t n,
                  PrecisionOp op, OverflowCounters* counters);
// out[i] = x[i] · round(scale)   (the constant itself is rounded to the format first, as
// frameworks do: bf16 sqrt(3072) = 55.5).
void emulated_scale(DType dtype, const float* x, double scale, float* out, int64_t n,
                    PrecisionOp op, OverflowCounters* counters);
// C[m × n] = A[m × k] · B[k × n] (row-major, dense) with emulated_dot's accumulation rules.
void emulated_matmul(DType dtype, DType accumulate, const float* a, const float* b, float* c,
                     int64_t m, int64_t n, int64_t k, PrecisionOp op, OverflowCounters* counters);

}  // namespace scalelab
