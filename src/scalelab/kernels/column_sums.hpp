// kernels/column_sums: a bias's gradient, the column sums of an output gradient dy[rows × cols]
// (row-major):
//
//   sums[o] += Σ_r dy[r, o]
//
// Every column is summed in one fixed order, whatever the SIMD width or the thread count: the even
// rows added in row order into one float accumulator and the odd rows into another (two chains of
// adds, so the adds of consecutive rows overlap), then sums[o] += even[o] + odd[o]. The fast
// kernel (Highway, every compiled target, chosen at run time) and its plain twin give the same bits.
//
// Threads take blocks of whole columns (one block per thread, at most 512 columns wide, a multiple
// of 16); a block is read in chunks of 32 rows, each chunk's rows once per strip of columns while
// they sit in L1/L2 (summing a strip of columns down all rows strode a page per row and spent its
// time in TLB misses).
#pragma once
#include <cstdint>

namespace scalelab {

// The fast kernel for float; the plain twin for double.
void add_column_sums(const float* dy, int64_t rows, int64_t cols, float* sums);
// The same sums, and bits[r, o] = bf16 bits of dy[r, o] (f32_to_bf16_row's rounding; row stride
// cols) written as dy is read: a bias's gradient and the bf16 copy of dy for the products, in one
// pass over dy instead of two.
void add_column_sums_and_bf16(const float* dy, int64_t rows, int64_t cols, float* sums,
                              uint16_t* bits);
void add_column_sums(const double* dy, int64_t rows, int64_t cols, double* sums);

// The plain twin: the loops above as written, one thread.
template <class T>
void add_column_sums_plain(const T* dy, int64_t rows, int64_t cols, T* sums);

}  // namespace scalelab
