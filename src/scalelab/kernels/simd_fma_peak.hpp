// kernels/simd_fma_peak: the FP32 fused multiply-add peak of this processor, measured, so that
// benchmarks can state their speed as a fraction of it. Dispatched at run time like every SIMD
// kernel (Highway): the best vector target of the CPU is the one measured.
#pragma once
#include <cstdint>
#include <string>

namespace scalelab {

// Runs `rounds` rounds of 12 independent vector FMA chains on the calling thread (enough chains to
// cover the FMA latency of two FMA units) and returns the floating-point operations done
// (2 per lane per FMA). The caller times it.
double simd_fma_peak_run(int64_t rounds);

// The f32 lanes per vector of the target simd_fma_peak_run uses (simd_dispatch.hpp's simd_target()).
int simd_fma_peak_lanes();

}  // namespace scalelab
