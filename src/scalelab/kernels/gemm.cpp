#include "scalelab/kernels/gemm.hpp"

#include <dnnl.hpp>

#include "scalelab/core/error.hpp"
#include "scalelab/core/parallel.hpp"

namespace scalelab {
namespace {

struct Strides {
  int64_t lda, ldb, ldc;
};

Strides resolve_strides(const GemmShape& s) {
  SL_CHECK(s.m >= 0 && s.n >= 0 && s.k >= 0, "gemm: negative size m=", s.m, " n=", s.n, " k=", s.k);
  Strides st{s.lda ? s.lda : (s.trans_a ? s.m : s.k), s.ldb ? s.ldb : (s.trans_b ? s.k : s.n),
             s.ldc ? s.ldc : s.n};
  return st;
}

dnnl::engine& cpu_engine() {
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

// float: one oneDNN matmul primitive. oneDNN keeps its own primitive cache keyed by the
// descriptor, so repeated shapes cost a cache look-up, not a JIT compilation.
template <>
void gemm<float>(const GemmShape& s, const float* a, const float* b, float* c, float alpha,
                 float beta) {
  if (s.m == 0 || s.n == 0) return;
  const Strides st = resolve_strides(s);
  if (s.k == 0) {  // C = beta C, and C is not read when beta = 0 (it may hold NaN)
    for (int64_t i = 0; i < s.m; ++i)
      for (int64_t j = 0; j < s.n; ++j) {
        float& out = c[i * st.ldc + j];
        out = beta == 0.0f ? 0.0f : beta * out;
      }
    return;
  }
  using dnnl::memory;
  const memory::dims a_strides = s.trans_a ? memory::dims{1, st.lda} : memory::dims{st.lda, 1};
  const memory::dims b_strides = s.trans_b ? memory::dims{1, st.ldb} : memory::dims{st.ldb, 1};
  const memory::desc a_md({s.m, s.k}, memory::data_type::f32, a_strides);
  const memory::desc b_md({s.k, s.n}, memory::data_type::f32, b_strides);
  const memory::desc c_md({s.m, s.n}, memory::data_type::f32, memory::dims{st.ldc, 1});

  dnnl::primitive_attr attr;
  if (alpha != 1.0f) attr.set_output_scales(0, {alpha});
  if (beta != 0.0f) {
    dnnl::post_ops ops;
    ops.append_sum(beta);
    attr.set_post_ops(ops);
  }
  dnnl::engine& engine = cpu_engine();
  const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a_md, b_md, c_md), attr, engine);
  const dnnl::matmul matmul(pd);
  memory a_mem(a_md, engine, const_cast<float*>(a));
  memory b_mem(b_md, engine, const_cast<float*>(b));
  memory c_mem(c_md, engine, c);
  dnnl::stream stream(engine);
  matmul.execute(stream, {{DNNL_ARG_SRC, a_mem}, {DNNL_ARG_WEIGHTS, b_mem}, {DNNL_ARG_DST, c_mem}});
  stream.wait();
}

template void gemm_ref<float>(const GemmShape&, const float*, const float*, float*, float, float);
template void gemm_ref<double>(const GemmShape&, const double*, const double*, double*, double,
                               double);

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
