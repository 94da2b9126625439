// kernels/simd_dispatch: the one switch over every instruction-set choice scalelab makes at run time.
//
// Two engines choose an instruction set when the program runs, never at compile time (the build has
// no -march: the processor changes between machines):
//   Highway   scalelab's own SIMD kernels (flash attention, bf16 rounding, the FMA-peak probe): the
//             best target that is both compiled and supported, e.g. AVX3_SPR, AVX3_ZEN4, AVX3, AVX2.
//   oneDNN    the GEMMs: its own JIT, capped by a "max ISA".
// One environment variable caps both, read once before the first kernel runs:
//   SCALELAB_SIMD=<Highway target>   e.g. AVX2: Highway runs its AVX2 code and oneDNN is capped at
//                                    avx2; unset or "best": the best of each.
// An unknown or unsupported name is an Error listing what this machine allows. Element-wise loops
// outside these kernels are compiled for the baseline x86-64 and are not affected.
#pragma once
#include <string>
#include <vector>

namespace scalelab {

// Compiled and supported Highway targets, best first (e.g. {"AVX3_SPR", "AVX3", "AVX2", "SSE4", ...}).
std::vector<std::string> simd_targets();
// The target Highway dispatch uses now.
std::string simd_target();
// "Highway 1.0.3": the SIMD library the kernels were compiled against (the ledger's cache key).
std::string simd_library_version();
// The oneDNN max-ISA that goes with a Highway target (e.g. "AVX2" -> "avx2"; "AVX3_SPR" -> "all").
std::string onednn_isa_for(const std::string& target);

// Applies SCALELAB_SIMD once per process (later calls return at once); called by the kernels before
// their first use, and by the CLI at start-up so that a bad value fails before any work.
void apply_simd_environment();

// Tests and benchmarks: make Highway dispatch to `target` ("" = the best again). oneDNN's cap can be
// set only before its first GEMM, so this changes Highway's choice only.
void force_simd_target(const std::string& target);

}  // namespace scalelab
