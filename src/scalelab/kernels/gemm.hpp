// kernels/gemm: C = alpha · op(A) · op(B) + beta · C, row-major, with leading dimensions.
//
// float goes through oneDNN's matmul (0.75-1.0 of the FMA peak here; see DEVELOPERS.md for why
// not OpenBLAS); double (the finite-difference checks) and gemm_ref use a plain triple loop.
#pragma once
#include <cstdint>

namespace scalelab {

struct GemmShape {
  int64_t m = 0, n = 0, k = 0;  // op(A) is m x k, op(B) is k x n, C is m x n
  bool trans_a = false;         // A is stored k x m and used transposed
  bool trans_b = false;         // B is stored n x k and used transposed
  int64_t lda = 0, ldb = 0, ldc = 0;  // row strides in elements; 0 means dense
};

template <class T>
void gemm(const GemmShape& shape, const T* a, const T* b, T* c, T alpha = T(1), T beta = T(0));

// The reference twin: the definition of the result, used by the tests.
template <class T>
void gemm_ref(const GemmShape& shape, const T* a, const T* b, T* c, T alpha = T(1), T beta = T(0));

}  // namespace scalelab

#include <string>
namespace scalelab {
// "oneDNN 2.6.3 (cpu runtime: OpenMP, ISA: ...)" for `scalelab info`.
std::string gemm_backend_description();
}  // namespace scalelab
