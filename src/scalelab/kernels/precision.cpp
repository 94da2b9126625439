// Format rounding, bit conversions and counted emulated arithmetic (precision.hpp).
#include "scalelab/kernels/precision.hpp"

#include <cfenv>
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>

#include "scalelab/core/error.hpp"

namespace scalelab {

const char* dtype_name(DType dtype) {
  switch (dtype) {
    case DType::f32: return "f32";
    case DType::bf16: return "bf16";
    case DType::f16: return "f16";
  }
  return "?";
}

DType parse_dtype(const std::string& name) {
  if (name == "f32" || name == "float32") return DType::f32;
  if (name == "bf16" || name == "bfloat16") return DType::bf16;
  if (name == "f16" || name == "float16") return DType::f16;
  throw_error("dtype \"", name, "\" is not allowed: use \"f32\", \"bf16\" or \"f16\"");
}

FormatLimits format_limits(DType dtype) {
  switch (dtype) {
    case DType::f16: return {11, -14, 0x1p-14, 0x1p-24, 65504.0};
    case DType::bf16: return {8, -126, 0x1p-126, 0x1p-133, 0x1.fep127};
    case DType::f32: break;
  }
  return {24, -126, 0x1p-126, 0x1p-149, 0x1.fffffep127};
}

double round_to(DType dtype, double x) {
  if (!std::isfinite(x) || x == 0.0) return x;
  const FormatLimits f = format_limits(dtype);
  int e = 0;
  std::frexp(x, &e);  // |x| = m · 2^e, m in [0.5, 1): the leading bit has weight 2^(e-1)
  const int lead = std::max(e - 1, f.min_exponent);  // subnormals share the smallest exponent
  // Multiples of the quantum 2^(lead - p + 1) are the representable values near x; x / quantum is
  // exact (a power of two), and nearbyint rounds half to even in the default rounding mode.
  const double quantum = std::ldexp(1.0, lead - f.precision_bits + 1);
  const double r = std::nearbyint(x / quantum) * quantum;
  if (std::abs(r) > f.max_finite) return std::copysign(HUGE_VAL, x);
  return r;
}

uint16_t f32_to_f16_bits(float x) {
  if (std::isnan(x)) return std::signbit(x) ? 0xFE00 : 0x7E00;
  const double r = round_to(DType::f16, x);
  const uint16_t sign = std::signbit(r) ? 0x8000 : 0;
  const double a = std::abs(r);
  if (std::isinf(a)) return sign | 0x7C00;
  if (a == 0) return sign;
  if (a < 0x1p-14) return sign | static_cast<uint16_t>(a * 0x1p24);  // subnormal: a / 2^-24
  int e = 0;
  const double m = std::frexp(a, &e);  // a = m 2^e, m in [0.5, 1)
  const uint16_t exponent = static_cast<uint16_t>(e - 1 + 15);
  const uint16_t mantissa = static_cast<uint16_t>((m * 2 - 1) * 1024);
  return sign | static_cast<uint16_t>(exponent << 10) | mantissa;
}

float f16_bits_to_f32(uint16_t bits) {
  const double sign = (bits & 0x8000) ? -1.0 : 1.0;
  const int exponent = (bits >> 10) & 0x1F, mantissa = bits & 0x3FF;
  if (exponent == 0x1F) return mantissa ? std::nanf("") : static_cast<float>(sign * HUGE_VAL);
  if (exponent == 0) return static_cast<float>(sign * mantissa * 0x1p-24);
  return static_cast<float>(sign * std::ldexp(1.0 + mantissa / 1024.0, exponent - 15));
}

uint16_t f32_to_bf16_bits(float x) {
  if (std::isnan(x)) return std::signbit(x) ? 0xFFC0 : 0x7FC0;
  const float r = static_cast<float>(round_to(DType::bf16, x));  // exact in f32
  uint32_t u = 0;
  std::memcpy(&u, &r, 4);
  return static_cast<uint16_t>(u >> 16);
}

float bf16_bits_to_f32(uint16_t bits) {
  const uint32_t u = static_cast<uint32_t>(bits) << 16;
  float x = 0;
  std::memcpy(&x, &u, 4);
  return x;
}

const char* precision_op_name(PrecisionOp op) {
  static const char* names[kPrecisionOps] = {
      "input_cast", "embedding_scale", "q_scale",      "qk_matmul",     "logit_scale",
      "softmax_max_sub", "softmax_exp", "softmax_sum", "softmax_div",   "pv_matmul",
      "layernorm_sum", "layernorm_var", "layernorm_normalize", "residual_add", "gemm",
      "loss_scale", "activation_grad", "weight_grad"};
  return names[static_cast<int>(op)];
}

void OverflowCounters::merge(const OverflowCounters& other) {
  for (int i = 0; i < kPrecisionOps; ++i) {
    ops[i].results += other.ops[i].results;
    ops[i].overflow += other.ops[i].overflow;
    ops[i].nan += other.ops[i].nan;
    ops[i].underflow += other.ops[i].underflow;
    ops[i].subnormal += other.ops[i].subnormal;
    ops[i].max_abs = std::max(ops[i].max_abs, other.ops[i].max_abs);
  }
}

int64_t OverflowCounters::total_overflow() const {
  int64_t n = 0;
  for (const OpCounts& c : ops) n += c.overflow;
  return n;
}

int64_t OverflowCounters::total_nan() const {
  int64_t n = 0;
  for (const OpCounts& c : ops) n += c.nan;
  return n;
}

std::string OverflowCounters::summary() const {
  std::ostringstream out;
  for (int i = 0; i < kPrecisionOps; ++i) {
    const OpCounts& c = ops[i];
    if (c.results == 0) continue;
    out << precision_op_name(static_cast<PrecisionOp>(i)) << ": " << c.results << " results, "
        << c.overflow << " overflow, " << c.nan << " nan, " << c.underflow << " underflow, "
        << c.subnormal << " subnormal, max |x| " << c.max_abs << "\n";
  }
  return out.str();
}

float round_counted(DType dtype, double exact, PrecisionOp op, OverflowCounters* counters) {
  const double r = round_to(dtype, exact);
  if (counters) {
    OpCounts& c = (*counters)[op];
    c.results += 1;
    if (std::isnan(r)) {
      c.nan += 1;
    } else if (std::isinf(r)) {
      if (std::isfinite(exact)) c.overflow += 1;
    } else {
      const double a = std::abs(r);
      if (a > c.max_abs) c.max_abs = a;
      if (a == 0 && exact != 0) c.underflow += 1;
      if (a != 0 && a < format_limits(dtype).min_normal) c.subnormal += 1;
    }
  }
  return static_cast<float>(r);
}

float Emulated::exp(float a, PrecisionOp op) const {
  // e^a for a > 709.8 exceeds even double: pass the largest double, a finite value that rounds to
  // inf in every format, so that the overflow is counted as one.
  const double e = std::exp(double(a));
  return cast(std::isinf(e) && std::isfinite(a) ? std::numeric_limits<double>::max() : e, op);
}
float Emulated::sqrt(float a, PrecisionOp op) const { return cast(std::sqrt(double(a)), op); }

float emulated_dot(DType dtype, DType accumulate, const float* a, int64_t sa, const float* b,
                   int64_t sb, int64_t n, PrecisionOp op, OverflowCounters* counters) {
  SL_CHECK(accumulate == DType::f32 || accumulate == dtype, "accumulation in ",
           dtype_name(accumulate), " for ", dtype_name(dtype),
           " values is not supported: use f32 or the format itself");
  float acc = 0.0f;
  for (int64_t e = 0; e < n; ++e) {
    const float prod = round_counted(accumulate, double(a[e * sa]) * double(b[e * sb]), op, counters);
    acc = round_counted(accumulate, double(acc) + double(prod), op, counters);
  }
  return accumulate == dtype ? acc : round_counted(dtype, acc, op, counters);
}

void emulated_cast(DType dtype, float* x, int64_t n, PrecisionOp op, OverflowCounters* counters) {
  for (int64_t i = 0; i < n; ++i) x[i] = round_counted(dtype, x[i], op, counters);
}

void emulated_add(DType dtype, const float* a, const float* b, float* out, int64_t n,
                  PrecisionOp op, OverflowCounters* counters) {
  for (int64_t i = 0; i < n; ++i) out[i] = round_counted(dtype, double(a[i]) + b[i], op, counters);
}

void emulated_scale(DType dtype, const float* x, double scale, float* out, int64_t n,
                    PrecisionOp op, OverflowCounters* counters) {
  const double s = round_to(dtype, scale);
  for (int64_t i = 0; i < n; ++i) out[i] = round_counted(dtype, double(x[i]) * s, op, counters);
}

void emulated_matmul(DType dtype, DType accumulate, const float* a, const float* b, float* c,
                     int64_t m, int64_t n, int64_t k, PrecisionOp op, OverflowCounters* counters) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      c[i * n + j] = emulated_dot(dtype, accumulate, a + i * k, 1, b + j, n, k, op, counters);
}

}  // namespace scalelab
