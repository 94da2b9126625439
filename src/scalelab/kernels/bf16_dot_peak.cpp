// The vdpbf16ps peak loop (bf16_dot_peak.hpp).
#include "scalelab/kernels/bf16_dot_peak.hpp"

#include <string>

#include "scalelab/core/cpu.hpp"
#include "scalelab/core/error.hpp"
#include "scalelab/kernels/simd_dispatch.hpp"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace scalelab {
namespace {

#if defined(__x86_64__)
// 24 accumulators, chain i starting at i/8 (exact); a = 1.0 (bf16 0x3F80), b = 2⁻¹⁰ (bf16 0x3A80):
// each vdpbf16ps adds a·b + a·b = 2⁻⁹ to every lane. Values stay small: no overflow, no subnormals.
__attribute__((target("avx512f,avx512bf16"))) Bf16DotPeakRun dot_peak_loop(int64_t rounds) {
  const __m512bh a = reinterpret_cast<__m512bh>(_mm512_set1_epi16(0x3F80));
  const __m512bh b = reinterpret_cast<__m512bh>(_mm512_set1_epi16(0x3A80));
#define SL_INIT(i) __m512 c##i = _mm512_set1_ps(static_cast<float>(i) / 8.0f);
#define SL_STEP(i) c##i = _mm512_dpbf16_ps(c##i, a, b);
#define SL_ALL(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) \
                  X(12) X(13) X(14) X(15) X(16) X(17) X(18) X(19) X(20) X(21) X(22) X(23)
  SL_ALL(SL_INIT)
  for (int64_t r = 0; r < rounds; ++r) {
    SL_ALL(SL_STEP)
  }
  double checksum = 0;
#define SL_SUM(i) checksum += static_cast<double>(_mm512_reduce_add_ps(c##i));
  SL_ALL(SL_SUM)
#undef SL_SUM
#undef SL_ALL
#undef SL_STEP
#undef SL_INIT
  return {.flops = 2.0 * 32.0 * 24.0 * static_cast<double>(rounds), .checksum = checksum};
}
#endif

}  // namespace

bool bf16_dot_peak_available() {
#if defined(__x86_64__)
  apply_simd_environment();
  static const bool has_isa = detect_cpu().has("avx512bf16");
  // SCALELAB_SIMD=AVX2 (or lower) caps every SIMD path: no AVX-512 instruction then.
  return has_isa && simd_target().rfind("AVX3", 0) == 0;
#else
  return false;
#endif
}

Bf16DotPeakRun bf16_dot_peak_run(int64_t rounds) {
  if (!bf16_dot_peak_available()) {
    throw Error("bf16 dot-product peak: needs avx512bf16 and an AVX3 SIMD target (this run: " +
                simd_target() + ", avx512bf16 " + (detect_cpu().has("avx512bf16") ? "yes" : "no") + ")");
  }
  if (rounds < 0) throw Error("bf16 dot-product peak: rounds must be >= 0, got " + std::to_string(rounds));
#if defined(__x86_64__)
  return dot_peak_loop(rounds);
#else
  return {};
#endif
}

}  // namespace scalelab
