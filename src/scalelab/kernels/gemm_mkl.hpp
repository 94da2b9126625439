// kernels/gemm_mkl: Intel MKL's cblas_sgemm as an f32 GEMM library (GemmLibrary::mkl in gemm.hpp).
//
//   C = alpha · op(A) · op(B) + beta · C + bias        (beta = 0: C is not read)
//
// on the calling thread: the build links MKL's sequential layer (libmkl_sequential), and gemm.cpp
// splits C into one band per thread as it does for oneDNN, so there is one thread pool (OpenMP)
// and the result depends only on the shape and the thread count (MKL's strict reproducibility mode
// makes it independent of the operands' alignment too). The bias is MKL's C: C's rows are
// set to the bias and the product is added with beta = 1 (one rounding, as oneDNN's fused bias);
// the ReLU, the mask and the bf16 copy are gemm.cpp's row epilogue, as for oneDNN.
//
// Where from: MKL is not a Debian package; scripts/setup.sh installs PyPI's `mkl` and `mkl-include`
// wheels into the build's virtual environment and CMake finds them there (SCALELAB_MKL_PREFIX).
// A build without them has no MKL: mkl_linked() is false and GemmLibrary::mkl is refused.
//
// SCALELAB_SIMD caps MKL's instruction set as it caps oneDNN's and Highway's (apply_simd_environment
// calls cap_mkl_isa before any GEMM runs).
//
// The twin is gemm_ref / gemm_bias_act_ref (tests/kernels/gemm_test.cpp, gemm_epilogue_test.cpp run
// every case through every float library the build has).
#pragma once
#include <string>

#include "scalelab/kernels/gemm.hpp"

namespace scalelab {

// True when this build links MKL.
bool mkl_linked();
// "MKL 2026.2" (or "" without MKL), for `scalelab info` and the benchmarks.
std::string mkl_version();
// Strides resolved (nonzero) by the caller; only epilogue.bias is applied here. Throws Error without
// MKL, or when a size or stride does not fit MKL's 32-bit integers.
void gemm_mkl_f32(const GemmShape& shape, const float* a, const float* b, float* c, float alpha,
                  float beta, const float* bias);
// Applies SCALELAB_SIMD's cap and MKL's strict reproducibility before MKL's first call; once per
// process (later calls return at once). Throws Error for a bad SCALELAB_SIMD: gemm.cpp calls it
// before its bands' parallel region; the other functions here call it too.
void prepare_mkl();
// Caps MKL's instruction set at a Highway target's ("AVX2", "AVX3", ...; "best" or "" leaves it);
// no effect without MKL. Must run before the first MKL call.
void cap_mkl_isa(const std::string& highway_target);

}  // namespace scalelab
