#include "scalelab/kernels/gemm.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include <dnnl.hpp>
#include <omp.h>

#include "scalelab/core/error.hpp"
#include "scalelab/core/parallel.hpp"
#include "scalelab/kernels/bf16_convert.hpp"
#include "scalelab/kernels/epilogue_rows.hpp"
#include "scalelab/kernels/gemm_bands.hpp"
#include "scalelab/kernels/gemm_packed.hpp"
#include "scalelab/kernels/gemm_speed_probe.hpp"
#include "scalelab/kernels/simd_dispatch.hpp"

namespace scalelab {
namespace {

using detail::Band;
using detail::in_bands;
using detail::Strides;

Strides resolve_strides(const GemmShape& s) {
  SL_CHECK(s.m >= 0 && s.n >= 0 && s.k >= 0, "gemm: negative size m=", s.m, " n=", s.n, " k=", s.k);
  Strides st{s.lda ? s.lda : (s.trans_a ? s.m : s.k), s.ldb ? s.ldb : (s.trans_b ? s.k : s.n),
             s.ldc ? s.ldc : s.n};
  return st;
}

dnnl::engine& cpu_engine() {
  static const bool simd_ready = (apply_simd_environment(), true);  // oneDNN's ISA cap comes first
  (void)simd_ready;
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

}  // namespace

template <class T>
void gemm_ref(const GemmShape& s, const T* a, const T* b, T* c, T alpha, T beta) {
  const Strides st = resolve_strides(s);
  parallel_for(s.m, [&](int64_t i) {
    for (int64_t j = 0; j < s.n; ++j) {
      T acc = 0;
      for (int64_t p = 0; p < s.k; ++p) {
        const T av = s.trans_a ? a[p * st.lda + i] : a[i * st.lda + p];
        const T bv = s.trans_b ? b[j * st.ldb + p] : b[p * st.ldb + j];
        acc += av * bv;
      }
      T& out = c[i * st.ldc + j];
      out = alpha * acc + (beta == T(0) ? T(0) : beta * out);
    }
  });
}

template <>
void gemm<double>(const GemmShape& s, const double* a, const double* b, double* c, double alpha,
                  double beta) {
  gemm_ref<double>(s, a, b, c, alpha, beta);
}

namespace {

// Everything that picks a matmul primitive: sizes, layouts, operand type, and whether alpha and
// beta are applied (their values are runtime arguments of the cached primitive's attributes, so
// they are part of the key too).
struct MatmulKey {
  int64_t m, n, k, lda, ldb, ldc;
  bool trans_a, trans_b;
  dnnl::memory::data_type operands, dst;
  float alpha, beta;
  bool bias;  // the fused bias (gemm_bias_act)
  bool operator==(const MatmulKey&) const = default;
};
struct MatmulKeyHash {
  size_t operator()(const MatmulKey& key) const {
    size_t h = 1469598103934665603ull;
    auto mix = [&h](uint64_t v) { h = (h ^ v) * 1099511628211ull; };
    for (int64_t v : {key.m, key.n, key.k, key.lda, key.ldb, key.ldc}) mix(static_cast<uint64_t>(v));
    mix(uint64_t(key.trans_a) | uint64_t(key.trans_b) << 1 | uint64_t(key.bias) << 2 |
        uint64_t(key.operands) << 3 | uint64_t(key.dst) << 11);
    uint32_t ab[2];
    std::memcpy(&ab[0], &key.alpha, 4);
    std::memcpy(&ab[1], &key.beta, 4);
    mix(ab[0] | uint64_t(ab[1]) << 32);
    return h;
  }
};

// out[i, :] = bf16 bits of C[i, :] for m rows (out dense, row stride n): an epilogue's bf16_out.
// Inside a band's parallel region (dnnl_matmul's) parallel_for runs the rows on the calling thread.
void write_bf16_out(const GemmShape& s, const Strides& st, const float* c, uint16_t* out) {
  parallel_for(s.m, [&](int64_t i) { f32_to_bf16_row(c + i * st.ldc, s.n, out + i * s.n); });
}

// One oneDNN matmul: C[m, n] (of type dst, f32 or bf16; row stride ldc) = alpha op(A) op(B) +
// bias + beta C, with A and B of the given data type at the given element strides. oneDNN has
// its own primitive cache, but a look-up there hashes the whole descriptor and allocates; the
// small GEMMs of a training step (hundreds per step, many under 100 µs) are cheaper with a
// per-thread map of ready primitives, each with its memory objects made once (a call only swaps
// their data handles: no allocation per GEMM).
// A training run meets a few hundred distinct keys (bucketed batch lengths), so the map stays small.
void dnnl_execute(const GemmShape& s, const Strides& st, dnnl::memory::data_type operands,
                  dnnl::memory::data_type dst, const void* a, const void* b, void* c, float alpha,
                  float beta, const float* bias) {
  using dnnl::memory;
  struct Ready {
    dnnl::matmul primitive;
    memory a_mem, b_mem, c_mem, bias_mem;  // bias_mem: empty without a bias
  };
  thread_local std::unordered_map<MatmulKey, Ready, MatmulKeyHash> cache;
  const bool has_bias = bias != nullptr;
  const MatmulKey key{s.m, s.n, s.k, st.lda, st.ldb, st.ldc, s.trans_a, s.trans_b, operands, dst,
                      alpha, beta, has_bias};
  dnnl::engine& engine = cpu_engine();
  auto it = cache.find(key);
  if (it == cache.end()) {
    const memory::dims a_strides = s.trans_a ? memory::dims{1, st.lda} : memory::dims{st.lda, 1};
    const memory::dims b_strides = s.trans_b ? memory::dims{1, st.ldb} : memory::dims{st.ldb, 1};
    const memory::desc a_md({s.m, s.k}, operands, a_strides);
    const memory::desc b_md({s.k, s.n}, operands, b_strides);
    const memory::desc c_md({s.m, s.n}, dst, memory::dims{st.ldc, 1});
    const memory::desc bias_md = has_bias ? memory::desc({1, s.n}, memory::data_type::f32,
                                                         memory::dims{s.n, 1})
                                          : memory::desc();
    dnnl::primitive_attr attr;
    if (alpha != 1.0f) attr.set_output_scales(0, {alpha});
    if (beta != 0.0f) {
      dnnl::post_ops ops;
      ops.append_sum(beta);
      attr.set_post_ops(ops);
    }
    const dnnl::matmul::primitive_desc pd(
        has_bias ? dnnl::matmul::desc(a_md, b_md, bias_md, c_md) : dnnl::matmul::desc(a_md, b_md, c_md),
        attr, engine);
    if (cache.size() >= 4096) cache.clear();  // a bound, for callers that sweep many shapes
    // The handles are placeholders, replaced before every execution below.
    void* none = nullptr;
    it = cache.emplace(key, Ready{dnnl::matmul(pd), memory(a_md, engine, none),
                                  memory(b_md, engine, none), memory(c_md, engine, none),
                                  has_bias ? memory(bias_md, engine, none) : memory()})
             .first;
  }
  Ready& r = it->second;
  r.a_mem.set_data_handle(const_cast<void*>(a));
  r.b_mem.set_data_handle(const_cast<void*>(b));
  r.c_mem.set_data_handle(c);
  thread_local dnnl::stream stream(engine);
  if (has_bias) {
    r.bias_mem.set_data_handle(const_cast<float*>(bias));
    r.primitive.execute(stream, {{DNNL_ARG_SRC, r.a_mem}, {DNNL_ARG_WEIGHTS, r.b_mem},
                                 {DNNL_ARG_BIAS, r.bias_mem}, {DNNL_ARG_DST, r.c_mem}});
  } else {
    r.primitive.execute(stream, {{DNNL_ARG_SRC, r.a_mem}, {DNNL_ARG_WEIGHTS, r.b_mem},
                                 {DNNL_ARG_DST, r.c_mem}});
  }
  stream.wait();
}

// One oneDNN matmul with an f32 C, then the epilogue: C = act(alpha op(A) op(B) + bias + beta C)
// (bias and act only with alpha = 1 and beta = 0: gemm_bias_act; the bias inside oneDNN, the ReLU
// by relu_rows), the mask and C's bf16 copy.
void dnnl_matmul(const GemmShape& s, const Strides& st, dnnl::memory::data_type operands,
                 const void* a, const void* b, float* c, float alpha, float beta,
                 const GemmEpilogue<float>& epilogue = {}) {
  dnnl_execute(s, st, operands, dnnl::memory::data_type::f32, a, b, c, alpha, beta, epilogue.bias);
  // The bf16 copy of C is written by the last row pass over C, or by a pass of its own.
  uint16_t* bf16_pending = epilogue.bf16_out;
  if (epilogue.relu) {
    relu_rows(c, s.m, s.n, st.ldc, epilogue.keep_where_positive ? nullptr : bf16_pending);
    if (!epilogue.keep_where_positive) bf16_pending = nullptr;
  }
  if (epilogue.keep_where_positive) {
    mask_rows(c, epilogue.keep_where_positive, s.m, s.n, st.ldc, bf16_pending);
    bf16_pending = nullptr;
  }
  if (bf16_pending) write_bf16_out(s, st, c, bf16_pending);
}

// oneDNN's matmul of `operands` type in bands (depth slices for bf16: see in_bands).
void banded_matmul(const GemmShape& s, const Strides& st, dnnl::memory::data_type operands,
                   size_t element_bytes, const void* a, const void* b, float* c, float alpha,
                   float beta, const GemmEpilogue<float>& epilogue = {}) {
  const bool dense_slices = operands == dnnl::memory::data_type::bf16;
  in_bands(s, st, element_bytes, a, b, c, beta, epilogue, dense_slices, [&](const Band& band) {
    dnnl_matmul(band.shape, {st.lda, st.ldb, band.ldc}, operands, band.a, band.b, band.c, alpha,
                band.beta, band.epilogue);
  });
}

// scalelab's own f32 GEMM (kernels/gemm_packed.hpp) in bands.
void banded_packed(const GemmShape& s, const Strides& st, const float* a, const float* b, float* c,
                   float alpha, float beta, const GemmEpilogue<float>& epilogue = {}) {
  GemmShape resolved = s;
  resolved.lda = st.lda, resolved.ldb = st.ldb, resolved.ldc = st.ldc;
  in_bands(resolved, st, sizeof(float), a, b, c, beta, epilogue, /*dense_slices=*/false,
           [&](const Band& band) {
             GemmShape shape = band.shape;
             shape.ldc = band.ldc;
             gemm_packed_f32(shape, static_cast<const float*>(band.a),
                             static_cast<const float*>(band.b), band.c, alpha, band.beta,
                             band.epilogue);
           });
}

// C = beta C when k = 0 (C is not read when beta = 0: it may hold NaN). Returns true if handled.
bool trivial_float_gemm(const GemmShape& s, const Strides& st, float* c, float beta) {
  if (s.m == 0 || s.n == 0) return true;
  if (s.k != 0) return false;
  for (int64_t i = 0; i < s.m; ++i)
    for (int64_t j = 0; j < s.n; ++j) {
      float& out = c[i * st.ldc + j];
      out = beta == 0.0f ? 0.0f : beta * out;
    }
  return true;
}

// An operand as stored: `rows` rows of `cols` elements, `ld` apart. op(A) = A is stored m x k,
// op(A) = Aᵀ is stored k x m (likewise B).
struct StoredOperand {
  int64_t rows, cols, ld;
};
StoredOperand stored_a(const GemmShape& s, const Strides& st) {
  return s.trans_a ? StoredOperand{s.k, s.m, st.lda} : StoredOperand{s.m, s.k, st.lda};
}
StoredOperand stored_b(const GemmShape& s, const Strides& st) {
  return s.trans_b ? StoredOperand{s.n, s.k, st.ldb} : StoredOperand{s.k, s.n, st.ldb};
}

// A scratch buffer that grows and is never cleared (every element is written before it is read).
template <class T>
struct Scratch {
  std::unique_ptr<T[]> data;
  int64_t capacity = 0;
  T* get(int64_t n) {
    if (n > capacity) data.reset(new T[static_cast<size_t>(n)]), capacity = n;
    return data.get();
  }
};

// n floats converted by convert(src, n, dst) in chunks, one call per chunk (not per row: rows of
// 64 floats spent more in the calls than in the conversion). Each element is converted alone, so
// the split changes no result.
template <class Out, class Convert>
void convert_dense(const float* x, int64_t n, Out* out, Convert convert) {
  parallel_elements(n, [&](int64_t begin, int64_t end) { convert(x + begin, end - begin, out + begin); });
}

// Copies the operand densely (row stride = cols), converted: a dense operand as one run, a strided
// one row by row.
template <class Out, class Convert>
const Out* pack_operand(const float* x, StoredOperand op, Scratch<Out>& buf, Convert convert) {
  const int64_t total = op.rows * op.cols;
  Out* out = buf.get(total);
  if (op.ld == op.cols) {
    convert_dense(x, total, out, convert);
  } else {
    parallel_for(op.rows, [&](int64_t r) { convert(x + r * op.ld, op.cols, out + r * op.cols); });
  }
  return out;
}

// The strides of the packed (dense) operands.
Strides dense_strides(const GemmShape& s, const Strides& st) {
  return {s.trans_a ? s.m : s.k, s.trans_b ? s.k : s.n, st.ldc};
}

std::atomic<MatmulPrecision> g_matmul_precision{MatmulPrecision::f32};
std::atomic<GemmLibrary> g_gemm_library{default_gemm_library()};

// The f32 GEMM in bands, by the library in use.
void f32_in_bands(const GemmShape& s, const Strides& st, const float* a, const float* b, float* c,
                  float alpha, float beta, const GemmEpilogue<float>& epilogue = {}) {
  if (gemm_library() == GemmLibrary::packed)
    banded_packed(s, st, a, b, c, alpha, beta, epilogue);
  else
    banded_matmul(s, st, dnnl::memory::data_type::f32, sizeof(float), a, b, c, alpha, beta, epilogue);
}

// Both operands copied densely by convert (into Packed elements), then the GEMM in bands: oneDNN's
// bf16 matmul for bf16 bits, the f32 library in use for f32 values. The two bf16 paths below
// differ only in those. An operand already converted (a_done, b_done: the dense stored operand,
// as pack_operand makes it) is used as it is.
template <class Packed, class Convert>
void gemm_converted(const GemmShape& s, const float* a, const float* b, float* c, float alpha,
                    float beta, Convert convert, const GemmEpilogue<float>& epilogue,
                    const Packed* a_done = nullptr, const Packed* b_done = nullptr) {
  const Strides st = resolve_strides(s);
  thread_local Scratch<Packed> a_packed, b_packed;
  const Packed* pa = a_done ? a_done : pack_operand(a, stored_a(s, st), a_packed, convert);
  const Packed* pb = b_done ? b_done : pack_operand(b, stored_b(s, st), b_packed, convert);
  if constexpr (std::is_same_v<Packed, float>)
    f32_in_bands(s, dense_strides(s, st), pa, pb, c, alpha, beta, epilogue);
  else
    banded_matmul(s, dense_strides(s, st), dnnl::memory::data_type::bf16, sizeof(Packed), pa, pb,
                  c, alpha, beta, epilogue);
}

}  // namespace

namespace detail {

// bf16 operands in hardware: bf16 bits, one bf16 x bf16 -> f32 matmul.
void gemm_bf16_hardware(const GemmShape& s, const float* a, const float* b, float* c, float alpha,
                        float beta, const GemmEpilogue<float>& epilogue, const uint16_t* a_bf16,
                        const uint16_t* b_bf16) {
  const Strides st = resolve_strides(s);
  if (trivial_float_gemm(s, st, c, beta)) return;
  gemm_converted<uint16_t>(s, a, b, c, alpha, beta, f32_to_bf16_row, epilogue, a_bf16, b_bf16);
}

// bf16 operands without bf16 hardware: bf16 values held in f32, the f32 matmul.
void gemm_bf16_rounded_f32(const GemmShape& s, const float* a, const float* b, float* c,
                           float alpha, float beta, const GemmEpilogue<float>& epilogue) {
  const Strides st = resolve_strides(s);
  if (trivial_float_gemm(s, st, c, beta)) return;
  gemm_converted<float>(s, a, b, c, alpha, beta, round_row_to_bf16, epilogue);
}

void gemm_f32(const GemmShape& s, const float* a, const float* b, float* c, float alpha,
              float beta) {
  const Strides st = resolve_strides(s);
  if (trivial_float_gemm(s, st, c, beta)) return;
  f32_in_bands(s, st, a, b, c, alpha, beta);
}

}  // namespace detail

namespace {

// Every float GEMM: the matmul precision's path, with an optional fused epilogue. An operand's
// bf16 copy (Bf16Copy) is used where oneDNN's bf16 matmul runs, ignored elsewhere.
void float_gemm(const GemmShape& s, FloatOperand a, FloatOperand b, float* c, float alpha,
                float beta, const GemmEpilogue<float>& epilogue) {
  if (matmul_precision() == MatmulPrecision::bf16 && bf16_matmul_uses_hardware()) {
    detail::gemm_bf16_hardware(s, a.values, b.values, c, alpha, beta, epilogue, a.bf16, b.bf16);
    return;  // (bf16_out written band by band, in dnnl_matmul)
  }
  // The other paths (where Bf16Copy keeps no copy, so bf16_out is null in practice): C's bf16
  // copy, if asked for, in a pass after the GEMM.
  GemmEpilogue<float> rest = epilogue;
  rest.bf16_out = nullptr;
  if (matmul_precision() == MatmulPrecision::bf16) {
    detail::gemm_bf16_rounded_f32(s, a.values, b.values, c, alpha, beta, rest);
  } else {
    const Strides st = resolve_strides(s);
    if (!trivial_float_gemm(s, st, c, beta)) f32_in_bands(s, st, a.values, b.values, c, alpha, beta, rest);
  }
  if (epilogue.bf16_out) write_bf16_out(s, resolve_strides(s), c, epilogue.bf16_out);
}

// The epilogue applied in place after a GEMM (the k = 0 case of the fused path, and the twins).
template <class T>
void apply_epilogue(const GemmShape& s, const Strides& st, T* c, const GemmEpilogue<T>& e) {
  for (int64_t i = 0; i < s.m; ++i)
    for (int64_t j = 0; j < s.n; ++j) {
      T& out = c[i * st.ldc + j];
      if (e.bias) out += e.bias[j];
      if (e.relu && out < T(0)) out = T(0);  // NaN and -0 kept
      if (e.keep_where_positive && !(e.keep_where_positive[i * s.n + j] > T(0))) out = T(0);
    }
  if constexpr (std::is_same_v<T, float>) {
    if (e.bf16_out) write_bf16_out(s, st, c, e.bf16_out);
  } else {
    SL_CHECK(e.bf16_out == nullptr, "GemmEpilogue::bf16_out is for float GEMMs only");
  }
}

}  // namespace

template <>
void gemm<float>(const GemmShape& s, const float* a, const float* b, float* c, float alpha,
                 float beta) {
  float_gemm(s, {a}, {b}, c, alpha, beta, {});
}

void gemm_operands(const GemmShape& s, FloatOperand a, FloatOperand b, float* c, float alpha,
                   float beta, const GemmEpilogue<float>& epilogue) {
  if (s.k == 0) {  // oneDNN is not called: C = beta C, then the epilogue
    const Strides st = resolve_strides(s);
    trivial_float_gemm(s, st, c, beta);
    apply_epilogue(s, st, c, epilogue);
    return;
  }
  float_gemm(s, a, b, c, alpha, beta, epilogue);
}

void gemm_bf16_out(const GemmShape& s, FloatOperand a, FloatOperand b, uint16_t* c,
                   const GemmBf16Epilogue& epilogue) {
  SL_CHECK(Bf16Copy::kept(),
           "gemm_bf16_out: runs only where the float GEMMs run oneDNN's bf16 matmul");
  SL_CHECK(s.k > 0, "gemm_bf16_out: k = 0 (C would be the bias alone)");
  const Strides st = resolve_strides(s);
  if (s.m == 0 || s.n == 0) return;
  thread_local Scratch<uint16_t> a_packed, b_packed;
  SL_CHECK(a.bf16 || a.values, "gemm_bf16_out: operand A has neither values nor a bf16 copy");
  SL_CHECK(b.bf16 || b.values, "gemm_bf16_out: operand B has neither values nor a bf16 copy");
  const uint16_t* pa =
      a.bf16 ? a.bf16 : pack_operand(a.values, stored_a(s, st), a_packed, f32_to_bf16_row);
  const uint16_t* pb =
      b.bf16 ? b.bf16 : pack_operand(b.values, stored_b(s, st), b_packed, f32_to_bf16_row);
  const Strides dense = dense_strides(s, st);
  // C's rows in one band per thread where the split of an f32 C with a mask would take rows
  // (detail::band_split: rows only, and no depth slices with an epilogue), each band's ReLU and
  // mask right after its matmul (cache-hot).
  const int64_t bands = detail::band_split(s, /*rows_only=*/true, false, /*has_epilogue=*/true).bands;
  const auto band = [&](int64_t t) {
    const int64_t m0 = s.m * t / bands, m1 = s.m * (t + 1) / bands;
    GemmShape shape = s;
    shape.m = m1 - m0;
    const uint16_t* a_band = pa + (s.trans_a ? m0 : m0 * dense.lda);
    uint16_t* c_band = c + m0 * st.ldc;
    dnnl_execute(shape, dense, dnnl::memory::data_type::bf16, dnnl::memory::data_type::bf16, a_band,
                 pb, c_band, 1.0f, 0.0f, epilogue.bias);
    if (epilogue.relu) relu_bf16_rows(c_band, shape.m, s.n, st.ldc);
    if (epilogue.keep_where_positive)
      mask_bf16_rows(c_band, epilogue.keep_where_positive + m0 * s.n, shape.m, s.n, st.ldc);
  };
  if (bands <= 1) {
    band(0);
    return;
  }
#pragma omp parallel num_threads(static_cast<int>(bands))
  band(omp_get_thread_num());
}

template <>
void gemm_bias_act<float>(const GemmShape& s, const float* a, const float* b, float* c,
                          const GemmEpilogue<float>& epilogue) {
  gemm_operands(s, {a}, {b}, c, 1.0f, 0.0f, epilogue);
}

bool Bf16Copy::kept() {
  return matmul_precision() == MatmulPrecision::bf16 && bf16_matmul_uses_hardware();
}

uint16_t* Bf16Copy::reserve(const float* x, int64_t n) {
  valid_ = kept();
  source_ = x, n_ = n;
  if (!valid_) return nullptr;
  if (bits_.numel() < n) bits_.resize({n});
  return bits_.data();
}

const uint16_t* Bf16Copy::convert(const float* x, int64_t n) {
  uint16_t* out = reserve(x, n);
  if (out) convert_dense(x, n, out, f32_to_bf16_row);
  return out;
}

template <>
void gemm_bias_act<double>(const GemmShape& s, const double* a, const double* b, double* c,
                           const GemmEpilogue<double>& epilogue) {
  gemm_bias_act_ref<double>(s, a, b, c, epilogue);
}

template <class T>
void gemm_bias_act_ref(const GemmShape& s, const T* a, const T* b, T* c, const GemmEpilogue<T>& e) {
  gemm_ref<T>(s, a, b, c, T(1), T(0));
  apply_epilogue(s, resolve_strides(s), c, e);
}

const char* matmul_precision_name(MatmulPrecision precision) {
  return precision == MatmulPrecision::bf16 ? "bf16" : "f32";
}

MatmulPrecision parse_matmul_precision(const std::string& name) {
  if (name == "f32") return MatmulPrecision::f32;
  if (name == "bf16") return MatmulPrecision::bf16;
  if (name == "auto") return auto_matmul_precision(measured_matmul_speed().bf16_over_f32());
  throw_error("matmul precision \"", name, "\" is not allowed: use \"f32\", \"bf16\" or \"auto\"");
}

const char* gemm_library_name(GemmLibrary library) {
  return library == GemmLibrary::packed ? "scalelab" : "oneDNN";
}

// oneDNN: on the CPUs measured (docs/performance.md and docs/kernel-design.md, "GEMM libraries": Intel Xeons with AVX-512,
// and the same capped at AVX2) the packed GEMM is within a few per cent of it on the standard
// shapes with K >= 256 and behind on the K = 64 ones, nowhere ahead.
GemmLibrary default_gemm_library() { return GemmLibrary::onednn; }

GemmLibrary gemm_library() { return g_gemm_library.load(std::memory_order_relaxed); }

ScopedGemmLibrary::ScopedGemmLibrary(GemmLibrary library) : saved_(g_gemm_library.exchange(library)) {}
ScopedGemmLibrary::~ScopedGemmLibrary() { g_gemm_library.store(saved_); }

MatmulPrecision matmul_precision() { return g_matmul_precision.load(std::memory_order_relaxed); }

ScopedMatmulPrecision::ScopedMatmulPrecision(MatmulPrecision precision)
    : saved_(g_matmul_precision.exchange(precision)) {}
ScopedMatmulPrecision::~ScopedMatmulPrecision() { g_matmul_precision.store(saved_); }

bool bf16_matmul_in_hardware() {
  const dnnl::cpu_isa isa = dnnl::get_effective_cpu_isa();
  return isa == dnnl::cpu_isa::avx512_core_bf16 || isa == dnnl::cpu_isa::avx512_core_amx;
}

bool bf16_matmul_uses_hardware() {
  return bf16_matmul_pays(measured_matmul_speed().bf16_over_f32());
}

template void gemm_ref<float>(const GemmShape&, const float*, const float*, float*, float, float);
template void gemm_ref<double>(const GemmShape&, const double*, const double*, double*, double,
                               double);
template void gemm_bias_act_ref<float>(const GemmShape&, const float*, const float*, float*,
                                       const GemmEpilogue<float>&);
template void gemm_bias_act_ref<double>(const GemmShape&, const double*, const double*, double*,
                                        const GemmEpilogue<double>&);

}  // namespace scalelab

namespace scalelab {

std::string gemm_backend_description() {
  const dnnl_version_t* v = dnnl_version();
  std::string isa;
  switch (dnnl::get_effective_cpu_isa()) {
    case dnnl::cpu_isa::avx512_core_amx: isa = "avx512_core_amx"; break;
    case dnnl::cpu_isa::avx512_core_bf16: isa = "avx512_core_bf16"; break;
    case dnnl::cpu_isa::avx512_core_vnni: isa = "avx512_core_vnni"; break;
    case dnnl::cpu_isa::avx512_core: isa = "avx512_core"; break;
    case dnnl::cpu_isa::avx2_vnni: isa = "avx2_vnni"; break;
    case dnnl::cpu_isa::avx2: isa = "avx2"; break;
    case dnnl::cpu_isa::avx: isa = "avx"; break;
    case dnnl::cpu_isa::sse41: isa = "sse41"; break;
    default: isa = "other"; break;
  }
  return "oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." +
         std::to_string(v->patch) + " (" + (v->cpu_runtime == DNNL_RUNTIME_OMP ? "OpenMP" : "other") +
         " runtime, ISA " + isa + ")";
}

}  // namespace scalelab
