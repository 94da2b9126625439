// kernels/gemm_packed: scalelab's own f32 GEMM, the loop nest of BLIS (Van Zee & van de Geijn,
// "BLIS: A Framework for Rapidly Instantiating BLAS Functionality", 2015) over Highway vectors,
// compiled for every Highway target and chosen at run time (SCALELAB_SIMD caps it like every kernel).
//
//   C = act( alpha · op(A) · op(B) + beta · C + bias )  ·  [keep > 0]
//
// the contract of gemm / gemm_bias_act in gemm.hpp (beta = 0: C is not read; the epilogue only with
// alpha = 1, beta = 0), on the calling thread: gemm.cpp splits C's rows into one band per thread.
//
// Blocking (W = 2 vectors: 32 floats on AVX-512, 16 on AVX2; R = 12 rows where there are 32 vector
// registers, 6 where there are 16), BLIS's order with the broadcast operand (A) in L1:
//   for each block of NC columns of C            (NC = 1024)
//     for each block of kc ≤ KC of the depth     (kc = K split evenly into blocks of ≤ 256)
//       pack op(B)[p0:p0+kc, j0:j0+NC] into panels [kc × W], columns past N zero   (≤ 1 MiB: L2)
//       (a row-major B under a C of at most 256 × 256: read in place, but for its edge panel)
//       for each sliver of R rows of A
//         pack op(A)[i:i+R, p0:p0+kc] into one panel [kc × R], rows past M zero  (12 KiB: L1)
//         (a row-major A under a C at most 3 panels wide: read in place instead)
//         for each B panel (streamed from L2):
//           micro-kernel: the R × W tile of A_sliver · B_panel in 2R vector accumulators
//           (per k: two vector loads of B, R broadcasts of A, 2R FMAs), added to C
// The first depth block applies alpha and beta, the others add, the last applies the epilogue, all
// on the tile while it is in registers or L1. Sums run over k in order within a block and block
// by block, so the result is deterministic and independent of the thread count (bands never
// split the depth).
//
// Speed: docs/performance.md, "GEMM libraries" (the column "scalelab packed"), and its loop nest
// in docs/kernel-design.md; the process default library is picked from those tables (default_gemm_library in gemm.cpp).
//
// The twin is gemm_ref / gemm_bias_act_ref (tests/kernels/gemm_test.cpp, gemm_epilogue_test.cpp
// run every case through both float libraries).
#pragma once
#include "scalelab/kernels/gemm.hpp"

namespace scalelab {

// Strides resolved (nonzero) by the caller; a, b, c as gemm's; keep_where_positive's row stride is
// shape.n.
void gemm_packed_f32(const GemmShape& shape, const float* a, const float* b, float* c, float alpha,
                     float beta, const GemmEpilogue<float>& epilogue);

// The micro-kernel alone on the calling thread, `rounds` times over one depth block of packed A and
// B panels that stay in L1: the ceiling of this GEMM on the CPU (the GEMM table prints it beside
// the FMA peak). Returns the flops done; the caller times it.
double gemm_packed_micro_tile_run(int64_t rounds);

}  // namespace scalelab
