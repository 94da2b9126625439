// kernels/bf16_dot_peak: the peak of AVX512-BF16's dot-product instruction (vdpbf16ps), measured,
// beside the f32 FMA peak of simd_fma_peak.hpp.
//
// Why: on a processor with AVX512-BF16 but no AMX, a bf16 GEMM is built from vdpbf16ps, which does
// two multiply-adds per f32 lane (32 per zmm instruction, against an FMA's 16). Whether bf16 matmuls
// can beat f32 there depends on how many of them the core issues per cycle, which differs between
// processors. The ratio bf16-dot peak / FMA peak bounds what any bf16 GEMM without AMX can gain over
// f32: a GEMM cannot run faster than its multiply-add instruction.
//
// Run-time dispatch, like every SIMD kernel (simd_dispatch.hpp): available only when the processor
// has avx512bf16 and SCALELAB_SIMD leaves an AVX3 target in use. Highway 1.0.3 has no bf16 dot
// product, so the loop is written with the intrinsic under a function target attribute.
#pragma once
#include <cstdint>

namespace scalelab {

// True when bf16_dot_peak_run can run here.
bool bf16_dot_peak_available();

struct Bf16DotPeakRun {
  double flops;     // floating-point operations done: 2 per multiply-add, 32 multiply-adds per instruction
  double checksum;  // sum of every accumulator lane at the end (a correctness check for tests)
};

// Runs `rounds` rounds of 24 independent vdpbf16ps chains on the calling thread (enough to cover its
// latency on every processor seen); the caller times it. Each instruction adds 1 · 2⁻¹⁰ twice to
// every lane, so after R rounds the accumulators hold exactly their start value + R · 2⁻⁹ (exact in
// f32 while R < 2²⁰). Throws Error when !bf16_dot_peak_available().
Bf16DotPeakRun bf16_dot_peak_run(int64_t rounds);

}  // namespace scalelab
