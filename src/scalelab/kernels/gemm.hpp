// kernels/gemm: C = alpha · op(A) · op(B) + beta · C, row-major, with leading dimensions.
//
// float goes through oneDNN's matmul (or scalelab's own packed GEMM: GemmLibrary below), C's rows
// split into one band per thread (gemm.cpp); not OpenBLAS, which Debian's 0.3.21 runs at ~0.1 of
// the peak here (docs/performance.md). double
// (the finite-difference checks) and gemm_ref use a plain triple loop.
//
// Matmul precision (PyTorch's torch.set_float32_matmul_precision, "medium" = bf16): with
// MatmulPrecision::bf16 a float GEMM rounds both operands to bfloat16 (round-to-nearest-even),
// multiplies them exactly and sums in f32; C, alpha and beta stay f32. Where oneDNN's bf16 matmul
// was measured no slower than its f32 one on this processor (kernels/gemm_speed_probe.hpp), the
// operands are converted to bf16 and that matmul runs; elsewhere they are rounded into f32 buffers
// and the f32 matmul runs: the same numbers (up to summation order), a little slower than f32 (the
// rounding). The twin is gemm_ref on operands rounded by f32_to_bf16_bits. double GEMMs ignore the
// setting (they are the finite-difference checks).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "scalelab/core/tensor.hpp"

namespace scalelab {

struct GemmShape {
  int64_t m = 0, n = 0, k = 0;  // op(A) is m x k, op(B) is k x n, C is m x n
  bool trans_a = false;         // A is stored k x m and used transposed
  bool trans_b = false;         // B is stored n x k and used transposed
  int64_t lda = 0, ldb = 0, ldc = 0;  // row strides in elements; 0 means dense
};

template <class T>
void gemm(const GemmShape& shape, const T* a, const T* b, T* c, T alpha = T(1), T beta = T(0));

// What a Linear layer does to C right after its GEMM, fused with the matmul: the bias is oneDNN's
// bias argument (added before C is stored); the ReLU and the ReLU-gradient mask run on each
// thread's band of C right after the thread's matmul wrote it (cache-hot, no parallel region of
// their own):
//     C[i, j] = act( op(A) op(B)[i, j] + bias[j] )          (alpha = 1, beta = 0)
//     act = identity, or ReLU: max(v, 0) with NaN and -0 kept (as activation_forward keeps them)
//     then, with keep_where_positive = a [m, n] (dense, row stride n):
//     C[i, j] = a[i, j] > 0 ? C[i, j] : 0                   (a ReLU's backward: da · [a > 0])
//     then, with bf16_out (float only): bf16_out[i, j] = bf16 bits of the final C[i, j] (dense,
//     row stride n; f32_to_bf16_row): the next GEMM's operand converted while the band is in cache
//     (Bf16Copy::reserve gives the buffer)
template <class T>
struct GemmEpilogue {
  const T* bias = nullptr;  // [n], or null: no bias
  bool relu = false;
  const T* keep_where_positive = nullptr;  // [m, n], or null
  uint16_t* bf16_out = nullptr;            // [m, n], or null (float GEMMs only)
};
template <class T>
void gemm_bias_act(const GemmShape& shape, const T* a, const T* b, T* c, const GemmEpilogue<T>& epilogue);
// The twin: gemm_ref, then the bias and the activation in plain loops.
template <class T>
void gemm_bias_act_ref(const GemmShape& shape, const T* a, const T* b, T* c,
                       const GemmEpilogue<T>& epilogue);

// A float operand converted to bf16 once for several GEMMs: a Linear layer's x and W serve its
// forward and its backward, its dy both backward products. Where the float GEMMs run oneDNN's bf16
// matmul (matmul_precision bf16 and bf16_matmul_uses_hardware) convert() keeps the operand's bf16
// bits (f32_to_bf16_row, the rounding every bf16 GEMM applies); elsewhere it keeps nothing and
// returns null. A GEMM given the copy computes exactly what it computes from the floats (the
// conversion is the same), without converting them again.
//
// The copy also records what it is a copy of (x and n), so that a layer handed another's copy of
// its input (the three projections of one input in attention, the FFN's hidden layer converted by
// the GEMM that wrote it) checks it is one: bits_of(x, n).
class Bf16Copy {
 public:
  // Whether copies are kept now: the float GEMMs run oneDNN's bf16 matmul (matmul_precision bf16
  // and bf16_matmul_uses_hardware()).
  static bool kept();
  // x: n floats, the operand as stored and dense. Returns the bits, or null (then bits() is null).
  const uint16_t* convert(const float* x, int64_t n);
  // Room for the bits of x[n], where copies are kept, for a GEMM writing x to fill
  // (GemmEpilogue::bf16_out); null elsewhere. The copy is x's once that GEMM has run.
  // x = null: a tensor held only as these bits (gemm_bf16_out's C), found by bits_of(nullptr, n).
  uint16_t* reserve(const float* x, int64_t n);
  const uint16_t* bits() const { return valid_ ? bits_.data() : nullptr; }
  // The bits if this is a copy of x[n], else null.
  const uint16_t* bits_of(const float* x, int64_t n) const {
    return valid_ && x == source_ && n == n_ ? bits_.data() : nullptr;
  }

 private:
  // 64-byte aligned (a Tensor): threads write the copy in bands of rows (a GEMM's bf16 output, the
  // column sums), and bands of rows a multiple of 64 bytes long then share no cache line.
  Tensor<uint16_t> bits_;
  bool valid_ = false;
  const float* source_ = nullptr;
  int64_t n_ = 0;
};

// An operand of a float GEMM: its values, and their bf16 copy when one was made (dense, the
// operand as stored: [m, k] for A, [k, m] for Aᵀ, likewise B; the shape's lda / ldb describe the
// values). The copy is used where oneDNN's bf16 matmul runs, the values elsewhere.
struct FloatOperand {
  const float* values = nullptr;
  const uint16_t* bf16 = nullptr;
};
// C = alpha op(A) op(B) + beta C, then the epilogue (as gemm_bias_act's, with any alpha, beta):
// gemm<float> and gemm_bias_act<float> with operands that may carry their bf16 copy.
void gemm_operands(const GemmShape& shape, FloatOperand a, FloatOperand b, float* c, float alpha,
                   float beta, const GemmEpilogue<float>& epilogue = {});

// A float GEMM whose C is kept only as bf16 bits, where the float GEMMs run oneDNN's bf16 matmul
// (matmul_precision bf16 and bf16_matmul_uses_hardware(); it throws elsewhere). alpha = 1,
// beta = 0, k > 0; C dense or at ldc (in bf16 elements):
//     C[i, j] = bf16( op(A) op(B)[i, j] + bias[j] )     (f32 sums, rounded once, by oneDNN)
//     then with relu: C[i, j] = 0 where C[i, j] < 0    (NaN and -0 kept: relu_bf16_rows)
//     then with keep_where_positive = a's bits [m, n] (dense): C[i, j] = a[i, j] > 0 ? C[i, j] : 0
// These are the bits of the f32 C's bf16 copy (GemmEpilogue::bf16_out) up to the sums' order
// (oneDNN's own with either C type) and the bits of a NaN; without the f32 C, C's bytes are halved.
// An operand is its bf16 copy where given (its values may then be null), else its values
// converted. The twin: gemm_bias_act_ref on the rounded operands, then f32_to_bf16_bits.
struct GemmBf16Epilogue {
  const float* bias = nullptr;                    // [n], or null
  bool relu = false;
  const uint16_t* keep_where_positive = nullptr;  // [m, n] bf16 bits, or null
};
void gemm_bf16_out(const GemmShape& shape, FloatOperand a, FloatOperand b, uint16_t* c,
                   const GemmBf16Epilogue& epilogue);

// The reference twin: the definition of the result, used by the tests.
template <class T>
void gemm_ref(const GemmShape& shape, const T* a, const T* b, T* c, T alpha = T(1), T beta = T(0));

// The library that runs the f32 GEMMs (and the f32 GEMM of bf16 operands rounded in f32):
//   onednn   oneDNN's matmul (Debian's libdnnl), C's rows in one band per thread;
//   packed   scalelab's own (kernels/gemm_packed.hpp), the same bands.
// The process default is default_gemm_library(); tests and benchmarks switch it for a scope.
enum class GemmLibrary { onednn, packed };
const char* gemm_library_name(GemmLibrary library);  // "oneDNN" | "scalelab"
GemmLibrary default_gemm_library();
GemmLibrary gemm_library();
class ScopedGemmLibrary {
 public:
  explicit ScopedGemmLibrary(GemmLibrary library);
  ~ScopedGemmLibrary();
  ScopedGemmLibrary(const ScopedGemmLibrary&) = delete;
  ScopedGemmLibrary& operator=(const ScopedGemmLibrary&) = delete;

 private:
  GemmLibrary saved_;
};

enum class MatmulPrecision { f32, bf16 };
const char* matmul_precision_name(MatmulPrecision precision);
// "f32" | "bf16" | "auto"; throws Error naming the value otherwise. "auto" resolves here, once, by
// measurement: auto_matmul_precision(measured_matmul_speed().bf16_over_f32())
// (kernels/gemm_speed_probe.hpp: bf16 where its GEMM runs >= 1.5x the f32 one).
MatmulPrecision parse_matmul_precision(const std::string& name);

// The process-wide setting read by gemm<float> (default f32). Set it for a scope, e.g. a training
// run, with ScopedMatmulPrecision; it is not meant to change while GEMMs run on other threads.
MatmulPrecision matmul_precision();
class ScopedMatmulPrecision {
 public:
  explicit ScopedMatmulPrecision(MatmulPrecision precision);
  ~ScopedMatmulPrecision();
  ScopedMatmulPrecision(const ScopedMatmulPrecision&) = delete;
  ScopedMatmulPrecision& operator=(const ScopedMatmulPrecision&) = delete;

 private:
  MatmulPrecision saved_;
};

// True when the effective oneDNN ISA has bf16 instructions (AMX or AVX512-BF16); what the
// instruction set offers, not what is used (that is measured: bf16_matmul_uses_hardware).
bool bf16_matmul_in_hardware();
// The path gemm<float> takes for matmul_precision bf16: oneDNN's bf16 matmul where the probe of
// this process measured it no slower than the f32 one (bf16_matmul_pays in gemm_speed_probe.hpp),
// else the operands rounded to bf16 and the f32 matmul (the same products: a bf16 x bf16 product
// is exact in f32; f32 sums, at f32 speed). The first call runs the probe.
bool bf16_matmul_uses_hardware();

namespace detail {
// The f32 matmul, whatever matmul_precision() says (the speed probe's reference).
void gemm_f32(const GemmShape& shape, const float* a, const float* b, float* c, float alpha,
              float beta);
// The two bf16 paths, callable directly so the tests cover both on any processor. Where oneDNN has
// no bf16 matmul for the ISA in use the first throws on one thread and ends the process inside the
// bands' parallel region: call it only where measured_matmul_speed().bf16_unavailable is empty.
// a_bf16 / b_bf16: the operand already converted (FloatOperand::bf16), or null.
void gemm_bf16_hardware(const GemmShape& shape, const float* a, const float* b, float* c,
                        float alpha, float beta, const GemmEpilogue<float>& epilogue = {},
                        const uint16_t* a_bf16 = nullptr, const uint16_t* b_bf16 = nullptr);
void gemm_bf16_rounded_f32(const GemmShape& shape, const float* a, const float* b, float* c,
                           float alpha, float beta, const GemmEpilogue<float>& epilogue = {});

// How a float GEMM is shared among the threads at the current thread count (kernels/gemm.cpp,
// in_bands): one band of C's rows or of its columns per thread, or one slice of the depth k per
// thread, the slices' products summed (oneDNN's bf16 matmul only: dense_slices). bands = 1: one
// call on the calling thread. Exposed so the tests can show which split a shape takes.
struct BandSplit {
  enum Axis { rows, columns, depth };
  int64_t bands = 1;
  Axis axis = rows;
};
BandSplit band_split(const GemmShape& shape, bool rows_only, bool dense_slices, bool has_epilogue);
}  // namespace detail

}  // namespace scalelab

#include <string>
namespace scalelab {
// "oneDNN 2.6.3 (cpu runtime: OpenMP, ISA: ...)" for `scalelab info`.
std::string gemm_backend_description();
}  // namespace scalelab
