#include "scalelab/kernels/gemm_mkl.hpp"

#include <cstdint>
#include <limits>

#include "scalelab/core/error.hpp"
#include "scalelab/kernels/simd_dispatch.hpp"

#ifdef SCALELAB_HAVE_MKL
#include <mkl_cblas.h>
#include <mkl_service.h>
#endif

namespace scalelab {

#ifdef SCALELAB_HAVE_MKL

bool mkl_linked() { return true; }

// Before MKL's first call (MKL refuses both settings later): the instruction-set cap of
// SCALELAB_SIMD (apply_simd_environment calls cap_mkl_isa), then conditional numerical
// reproducibility, strict: the same bits from run to run on this processor whatever the operands'
// alignment (scalelab's results depend only on the shape and the thread count). Strict mode
// measured no slower on a 512 x 256 x 256 product (an Intel Xeon with AMX, 2026-12-06).
void prepare_mkl() {
  static const bool ready = [] {
    apply_simd_environment();
    const int status = MKL_CBWR_Set(MKL_CBWR_AUTO | MKL_CBWR_STRICT);
    SL_CHECK(status == MKL_CBWR_SUCCESS, "MKL: MKL_CBWR_Set(AUTO | STRICT) failed with status ", status);
    return true;
  }();
  (void)ready;
}

std::string mkl_version() {
  prepare_mkl();
  MKLVersion v;
  MKL_Get_Version(&v);
  return "MKL " + std::to_string(v.MajorVersion) + "." + std::to_string(v.UpdateVersion);
}

void gemm_mkl_f32(const GemmShape& s, const float* a, const float* b, float* c, float alpha,
                  float beta, const float* bias) {
  prepare_mkl();
  constexpr int64_t kMaxInt = std::numeric_limits<MKL_INT>::max();
  for (int64_t v : {s.m, s.n, s.k, s.lda, s.ldb, s.ldc})
    SL_CHECK(v <= kMaxInt, "gemm (MKL): size or stride ", v, " exceeds MKL's ", kMaxInt,
             " (m=", s.m, " n=", s.n, " k=", s.k, ")");
  if (bias) {  // C = beta C + bias, then the product added to it
    for (int64_t i = 0; i < s.m; ++i) {
      float* row = c + i * s.ldc;
      if (beta == 0.0f)
        for (int64_t j = 0; j < s.n; ++j) row[j] = bias[j];
      else
        for (int64_t j = 0; j < s.n; ++j) row[j] = beta * row[j] + bias[j];
    }
    beta = 1.0f;
  }
  cblas_sgemm(CblasRowMajor, s.trans_a ? CblasTrans : CblasNoTrans,
              s.trans_b ? CblasTrans : CblasNoTrans, static_cast<MKL_INT>(s.m),
              static_cast<MKL_INT>(s.n), static_cast<MKL_INT>(s.k), alpha, a,
              static_cast<MKL_INT>(s.lda), b, static_cast<MKL_INT>(s.ldb), beta, c,
              static_cast<MKL_INT>(s.ldc));
}

void cap_mkl_isa(const std::string& target) {
  if (target.empty() || target == "best" || target == "AVX3_SPR") return;
  int isa = MKL_ENABLE_SSE4_2;  // SSE4, SSSE3, SCALAR, EMU128: MKL's lowest
  if (target == "AVX3_ZEN4") isa = MKL_ENABLE_AVX512_E3;  // AVX-512 with BF16 (and VNNI)
  else if (target == "AVX3_DL") isa = MKL_ENABLE_AVX512_E1;  // AVX-512 with VNNI
  else if (target == "AVX3") isa = MKL_ENABLE_AVX512;
  else if (target == "AVX2") isa = MKL_ENABLE_AVX2;
  // Returns 0 when the processor lacks the set asked for: then MKL keeps its own (lower) choice.
  MKL_Enable_Instructions(isa);
}

#else  // a build without MKL

bool mkl_linked() { return false; }
std::string mkl_version() { return ""; }
void gemm_mkl_f32(const GemmShape&, const float*, const float*, float*, float, float, const float*) {
  throw_error("gemm: this build has no MKL (scripts/setup.sh installs it; see docs/performance.md)");
}
void cap_mkl_isa(const std::string&) {}
void prepare_mkl() {}

#endif

}  // namespace scalelab
