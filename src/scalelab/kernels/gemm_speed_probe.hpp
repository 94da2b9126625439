// kernels/gemm_speed_probe: how fast oneDNN's bf16 matmul runs against its f32 one on this
// processor, measured once per process; the bf16 matmul settings follow the measured ratio.
//
// Why measure: whether bf16 GEMMs pay depends on the processor and on the library's kernels for it
// (AMX, a vdpbf16ps unit as wide as the FMA or half as wide, none at all), so no instruction-set
// rule predicts it; a short run of the two GEMMs on one representative shape answers it.
//
// The probe (one thread, so the other cores' load matters least): a forward GEMM of a Linear
// layer, x[512 × 256] · W[1024 × 256]ᵀ (a 512-row band of the standard configurations' FFN up
// projection, d_model 256, d_ff 1024: bench/standard_step.hpp), once to build both primitives, then
// kProbeCalls calls of each, alternated, timed in the thread's CPU time (a shared machine's other
// processes are not counted); each speed is the median. The bf16 call is the path
// training takes (detail::gemm_bf16_hardware): both operands converted to bf16, oneDNN's
// bf16 × bf16 → f32 matmul. Where oneDNN has no bf16 matmul for the ISA in use (e.g. oneDNN 2.6
// on AVX2), the bf16 speed is 0 and the reason is kept. SCALELAB_SIMD caps what is measured, as it
// caps every GEMM (simd_dispatch.hpp). Cost: a few tens of ms.
#pragma once
#include <string>

#include "scalelab/kernels/gemm.hpp"

namespace scalelab {

// "auto" picks bf16 where the bf16 GEMM runs at least this many times as fast as the f32 one:
// below it the gain would not pay for bf16's coarser products.
constexpr double kAutoBf16MinSpeedup = 1.5;
constexpr int kProbeCalls = 5;

struct MatmulSpeedProbe {
  int64_t m = 0, n = 0, k = 0;         // the probed shape (C is m × n, K = k)
  double f32_gflops = 0;               // median of the timed calls
  double bf16_gflops = 0;              // 0 when oneDNN has no bf16 matmul here
  std::string bf16_unavailable;        // why, when bf16_gflops is 0; empty otherwise
  // bf16_gflops / f32_gflops (0 when bf16 did not run).
  double bf16_over_f32() const { return f32_gflops > 0 ? bf16_gflops / f32_gflops : 0.0; }
};

// The rule behind "auto": bf16 iff bf16_over_f32 >= kAutoBf16MinSpeedup (NaN gives f32).
MatmulPrecision auto_matmul_precision(double bf16_over_f32);
MatmulPrecision auto_matmul_precision(bool) = delete;  // a ratio, not an instruction-set answer
// The path of matmul_precision = "bf16": oneDNN's bf16 matmul iff it is not slower than the f32
// one (bf16_over_f32 >= 1); otherwise the operands are rounded to bf16 values held in f32 and the
// f32 matmul runs (the same products, at f32 speed).
bool bf16_matmul_pays(double bf16_over_f32);

// Runs the probe now (tests and benchmarks; the engine reads measured_matmul_speed()).
MatmulSpeedProbe run_matmul_speed_probe();
// The probe of this process: run at the first call, then kept.
const MatmulSpeedProbe& measured_matmul_speed();

}  // namespace scalelab
