// kernels/column_sums: a bias's gradient, the column sums of an output gradient dy[rows × cols]
// (row-major):
//
//   sums[o] += Σ_r dy[r, o]
//
// Every column is summed in one fixed order, whatever the SIMD width or the thread count. The rows
// fall in chunks of kColumnSumRowChunk; in chunk k the even rows are added in row order into one
// float accumulator and the odd rows into another (two chains of adds, so the adds of consecutive
// rows overlap), and the chunk's partial is p_k = even + odd. Then
//
//   total = ((0 + p_0) + p_1) + ...   (chunk order),   sums[o] += total.
//
// The fast kernel (Highway, every compiled target, chosen at run time) and its plain twin give the
// same bits.
//
// Threads take runs of whole chunks, rows 0.. to the first thread as the GEMMs' row bands are
// (kernels/gemm.cpp), so a thread reads the rows it wrote and has in its own cache: splitting the
// columns instead made each thread read every row, half of them from the other core, at 2.9× the
// time for 1024 × 64 just written in row bands (docs/step-design.md). Only where there are fewer
// chunks than threads are the columns split too. The partials wait in a scratch of chunks × cols floats
// (1/32 of dy; kernels/thread_partials.hpp) and are added up after.
#pragma once
#include <cstdint>

namespace scalelab {

// Rows per chunk (even, so a row's parity is the same in its chunk as in dy).
inline constexpr int64_t kColumnSumRowChunk = 32;

// The fast kernel for float; the plain twin for double.
void add_column_sums(const float* dy, int64_t rows, int64_t cols, float* sums);
// The same sums, and bits[r, o] = bf16 bits of dy[r, o] (f32_to_bf16_row's rounding; row stride
// cols) written as dy is read: a bias's gradient and the bf16 copy of dy for the products, in one
// pass over dy instead of two.
void add_column_sums_and_bf16(const float* dy, int64_t rows, int64_t cols, float* sums,
                              uint16_t* bits);
// The same sums of dy held only as bf16 bits (a GEMM's bf16 C, kernels/gemm.hpp gemm_bf16_out):
// each element widened to float exactly, then summed as add_column_sums sums floats (the same
// bits as add_column_sums_plain on the widened values).
void add_column_sums_bf16(const uint16_t* dy, int64_t rows, int64_t cols, float* sums);
void add_column_sums(const double* dy, int64_t rows, int64_t cols, double* sums);

// The plain twin: the order above as written, one thread.
template <class T>
void add_column_sums_plain(const T* dy, int64_t rows, int64_t cols, T* sums);

}  // namespace scalelab
