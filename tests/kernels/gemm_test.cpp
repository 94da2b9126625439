// Independent checks of kernels/gemm: C = alpha op(A) op(B) + beta C, row-major with leading
// dimensions. float (through each library: oneDNN, and scalelab's own packed GEMM), double (plain
// loop) and gemm_ref are all compared against a
// long-double product of the same operands, over a grid of sizes (with 1 and odd sizes), all four
// transpose combinations, dense and sub-block layouts (lda/ldb/ldc larger than dense, the block
// not at the origin, everything outside C's block checked untouched), and several alpha/beta.
#include "scalelab/kernels/gemm.hpp"
#include "scalelab/kernels/simd_dispatch.hpp"

#include <cmath>
#include <iostream>
#include <limits>
#include <ostream>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "scalelab/core/error.hpp"
#include "scalelab/core/parallel.hpp"
#include "scalelab/core/rng.hpp"

namespace scalelab {
namespace {

enum class DType { f32, f64 };

struct GemmParam {
  DType dtype;
  GemmLibrary library;  // float only
  bool trans_a, trans_b;
  bool sub_block;  // operands are sub-blocks of bigger matrices (ld > dense, nonzero offset)
  double tol;      // |got - want| <= tol * (|alpha| sum_p |a_ip b_pj| + |beta c_ij|)
  friend std::ostream& operator<<(std::ostream& o, const GemmParam& p) {
    return o << (p.dtype == DType::f32 ? std::string("f32 ") + gemm_library_name(p.library) : "f64")
             << (p.trans_a ? " At" : " A")
             << (p.trans_b ? " Bt" : " B") << (p.sub_block ? " sub-block" : " dense") << " tol "
             << p.tol;
  }
};

constexpr double kSentinel = -777.125;

// A matrix stored row-major inside a bigger buffer: rows x cols at (row0, col0) with stride ld.
template <class T>
struct Stored {
  int64_t rows, cols, ld, row0, col0;
  std::vector<T> buf;
  Stored(int64_t r, int64_t c, bool sub_block, int64_t pad)
      : rows(r), cols(c), ld(sub_block ? c + pad : c), row0(sub_block ? 1 : 0),
        col0(sub_block ? 2 : 0),
        buf(static_cast<size_t>((r + row0 + (sub_block ? 1 : 0)) * ld + col0 + 1),
            static_cast<T>(kSentinel)) {}
  T* origin() { return buf.data() + row0 * ld + col0; }
  T& at(int64_t i, int64_t j) { return origin()[i * ld + j]; }
  bool inside(size_t flat) const {
    const int64_t off = static_cast<int64_t>(flat) - (row0 * ld + col0);
    if (off < 0) return false;
    const int64_t i = off / ld, j = off % ld;
    return i < rows && j < cols;
  }
};

// Sets the OpenMP thread count for a scope (also used by oneDNN, which runs on OpenMP here).
class ScopedThreadCount {
 public:
  explicit ScopedThreadCount(int n) : saved_(num_threads()) { set_num_threads(n); }
  ~ScopedThreadCount() { set_num_threads(saved_); }

 private:
  int saved_;
};

struct Failure {
  int count = 0;
  std::string first;
  double worst = 0;  // max |got - want| / (error scale) seen, for the log
};

template <class T>
void run_case(const GemmParam& p, int64_t m, int64_t n, int64_t k, double alpha, double beta,
              uint64_t seed, Failure& fail) {
  Rng rng(seed);
  // op(A) is m x k; stored k x m when transposed. op(B) is k x n; stored n x k when transposed.
  Stored<T> A(p.trans_a ? k : m, p.trans_a ? m : k, p.sub_block, 3);
  Stored<T> B(p.trans_b ? n : k, p.trans_b ? k : n, p.sub_block, 5);
  Stored<T> C(m, n, p.sub_block, 4);
  for (int64_t i = 0; i < A.rows; ++i)
    for (int64_t j = 0; j < A.cols; ++j) A.at(i, j) = static_cast<T>(rng.normal());
  for (int64_t i = 0; i < B.rows; ++i)
    for (int64_t j = 0; j < B.cols; ++j) B.at(i, j) = static_cast<T>(rng.normal());
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) C.at(i, j) = static_cast<T>(rng.normal());
  const auto a_before = A.buf, b_before = B.buf;
  auto a_op = [&](int64_t i, int64_t q) { return p.trans_a ? A.at(q, i) : A.at(i, q); };
  auto b_op = [&](int64_t q, int64_t j) { return p.trans_b ? B.at(j, q) : B.at(q, j); };
  // Expected result and its error scale, in long double.
  std::vector<long double> want(m * n);
  std::vector<double> mag(m * n);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      long double acc = 0, abs_acc = 0;
      for (int64_t q = 0; q < k; ++q) {
        acc += static_cast<long double>(a_op(i, q)) * b_op(q, j);
        abs_acc += std::abs(static_cast<long double>(a_op(i, q)) * b_op(q, j));
      }
      want[i * n + j] = alpha * acc + beta * static_cast<long double>(C.at(i, j));
      mag[i * n + j] = static_cast<double>(std::abs(alpha) * abs_acc +
                                           std::abs(beta * static_cast<long double>(C.at(i, j))));
    }
  GemmShape shape;
  shape.m = m, shape.n = n, shape.k = k;
  shape.trans_a = p.trans_a, shape.trans_b = p.trans_b;
  if (p.sub_block) shape.lda = A.ld, shape.ldb = B.ld, shape.ldc = C.ld;  // else 0: dense
  Stored<T> C_ref = C;
  const ScopedGemmLibrary library(p.library);
  gemm<T>(shape, A.origin(), B.origin(), C.origin(), static_cast<T>(alpha), static_cast<T>(beta));
  gemm_ref<T>(shape, A.origin(), B.origin(), C_ref.origin(), static_cast<T>(alpha),
              static_cast<T>(beta));

  auto report = [&](const std::string& what) {
    if (fail.count++ == 0) {
      std::ostringstream o;
      o << p << " m=" << m << " n=" << n << " k=" << k << " alpha=" << alpha << " beta=" << beta
        << ": " << what;
      fail.first = o.str();
    }
  };
  for (const auto* Cx : {&C, &C_ref}) {
    const char* who = Cx == &C ? "gemm" : "gemm_ref";
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        const double got = Cx->buf[Cx->row0 * Cx->ld + Cx->col0 + i * Cx->ld + j];
        const double w = static_cast<double>(want[i * n + j]);
        const double bound = p.tol * mag[i * n + j] + 1e-300;
        if (mag[i * n + j] > 0) fail.worst = std::max(fail.worst, std::abs(got - w) / mag[i * n + j]);
        if (!(std::abs(got - w) <= bound)) {
          std::ostringstream o;
          o << who << " C(" << i << "," << j << ") = " << got << ", want " << w << " (bound "
            << bound << ")";
          report(o.str());
          return;
        }
      }
    for (size_t f = 0; f < Cx->buf.size(); ++f)
      if (!Cx->inside(f) && Cx->buf[f] != static_cast<T>(kSentinel)) {
        report(std::string(who) + " wrote outside the C block at flat index " + std::to_string(f));
        return;
      }
  }
  if (A.buf != a_before || B.buf != b_before) report("A or B was modified");
}

class Gemm : public ::testing::TestWithParam<GemmParam> {};

// The size grid runs on one thread: hundreds of tiny products, where a loaded machine makes
// every OpenMP region cost a scheduler quantum. Threaded execution is covered below on shapes
// large enough for oneDNN and gemm_ref to split the work.
TEST_P(Gemm, MatchesLongDoubleProductOverSizeGrid) {
  const GemmParam p = GetParam();
  const ScopedThreadCount one_thread(1);
  const int64_t sizes[] = {1, 2, 7, 16, 33};
  const double alpha_beta[][2] = {{1, 0}, {0.5, 0}, {1, 1}, {-1.5, 0.25}, {0, 2}, {2, -1}};
  Failure fail;
  int cases = 0;
  uint64_t seed = 1;
  auto run = [&](int64_t m, int64_t n, int64_t k, double alpha, double beta) {
    if (p.dtype == DType::f32) run_case<float>(p, m, n, k, alpha, beta, seed++, fail);
    else run_case<double>(p, m, n, k, alpha, beta, seed++, fail);
    ++cases;
  };
  for (int64_t m : sizes)
    for (int64_t n : sizes)
      for (int64_t k : sizes) {
        const auto& ab = alpha_beta[(m + 3 * n + 7 * k) % 6];  // vary alpha/beta across the grid
        run(m, n, k, ab[0], ab[1]);
      }
  // Every alpha/beta pair on a few odd shapes.
  for (const auto& ab : alpha_beta)
    for (auto [m, n, k] : {std::tuple{5, 3, 9}, std::tuple{1, 13, 1}, std::tuple{9, 1, 31}})
      run(m, n, k, ab[0], ab[1]);
  EXPECT_EQ(fail.count, 0) << fail.count << " of " << cases << " cases failed; first: "
                           << fail.first;
  std::cout << "[ gemm     ] " << p << ": " << cases << " cases, worst |error| / (|alpha| sum|ab| + |beta c|) = "
            << fail.worst << "\n";
}

// On 2 threads: C split into two row bands (m >= 128), two column bands (m < 128, n >= 128), and
// where k >= 256 into bands of 32 rows (64 x 64, a narrow layer's weight gradient) or columns
// (40 x 70), or not at all (70 x 65 at k = 129).
TEST_P(Gemm, MatchesLongDoubleProductThreadedLargerShapes) {
  const GemmParam p = GetParam();
  const ScopedThreadCount two_threads(2);
  Failure fail;
  uint64_t seed = 1000;
  for (auto [m, n, k, alpha, beta] :
       {std::tuple{70, 65, 129, 1.0, 0.0}, std::tuple{128, 96, 200, -0.5, 1.0},
        std::tuple{257, 31, 64, 2.0, 0.25}, std::tuple{64, 131, 300, 1.0, 1.0},
        std::tuple{100, 256, 64, -1.0, 0.5}, std::tuple{64, 64, 1024, 1.0, 1.0},
        std::tuple{40, 70, 256, 0.5, 0.0}}) {
    if (p.dtype == DType::f32) run_case<float>(p, m, n, k, alpha, beta, seed++, fail);
    else run_case<double>(p, m, n, k, alpha, beta, seed++, fail);
  }
  EXPECT_EQ(fail.count, 0) << "first: " << fail.first;
  std::cout << "[ gemm     ] " << p << " threaded: worst normalised error " << fail.worst << "\n";
}

std::vector<GemmParam> gemm_params() {
  std::vector<GemmParam> ps;
  for (auto [d, library] : {std::pair{DType::f32, GemmLibrary::onednn},
                            std::pair{DType::f32, GemmLibrary::packed},
                            std::pair{DType::f64, GemmLibrary::onednn}})
    for (bool ta : {false, true})
      for (bool tb : {false, true})
        for (bool sub : {false, true})
          ps.push_back({d, library, ta, tb, sub, d == DType::f32 ? 1e-6 : 1e-15});
  return ps;
}

INSTANTIATE_TEST_SUITE_P(Grid, Gemm, ::testing::ValuesIn(gemm_params()));

// The packed GEMM's blocks (kernels/gemm_packed.hpp): more than one block of columns (1024) and of
// depth (256), uneven, with edge tiles in both directions (301 rows: a last A sliver of one row),
// in every layout, on one thread and in two bands; alpha and beta != 1 / 0 so every depth block's
// update is checked. Then every compiled SIMD target on one thread (its micro-tile and its panel
// packing through kernels/transpose_block-inl.hpp: B transposed, A row-major), with C 301 wide (A
// packed) and 70 wide (at most 3 panels: A read in place).
TEST(GemmPacked, MatchesLongDoubleProductAcrossBlocks) {
  Failure fail;
  uint64_t seed = 5000;
  int cases = 0;
  for (int threads : {1, 2}) {
    const ScopedThreadCount scoped(threads);
    for (bool ta : {false, true})
      for (bool tb : {false, true}) {
        const GemmParam p{DType::f32, GemmLibrary::packed, ta, tb, ta != tb, 2e-6};
        run_case<float>(p, 301, 1057, 530, 0.75, -0.5, seed++, fail);
        ++cases;
      }
  }
  const ScopedThreadCount one(1);
  for (const std::string& target : simd_targets()) {
    force_simd_target(target);
    for (bool tb : {false, true})
      for (int64_t n : {301, 70}) {
        const GemmParam p{DType::f32, GemmLibrary::packed, false, tb, tb, 2e-6};
        const int before = fail.count;
        run_case<float>(p, 45, n, 270, 0.75, -0.5, seed++, fail);
        EXPECT_EQ(fail.count, before) << "SIMD target " << target << ", n " << n
                                      << (tb ? ", B transposed" : "");
        ++cases;
      }
  }
  force_simd_target("");
  EXPECT_EQ(fail.count, 0) << fail.count << " of " << cases << " cases failed; first: " << fail.first;
  std::cout << "[ gemm     ] packed across blocks: worst normalised error " << fail.worst << "\n";
}

// ---- edge cases -----------------------------------------------------------------------------

// beta = 0 means C is not read (BLAS semantics; gemm_ref: "beta == 0 ? 0 : beta * out"), so
// garbage (NaN) in C must not leak into the result. That includes k = 0, where C = beta C = 0.
template <class T>
void beta_zero_ignores_nan(int64_t k, GemmLibrary library = GemmLibrary::onednn) {
  const ScopedGemmLibrary scoped(library);
  const int64_t m = 3, n = 4;
  std::vector<T> a(m * std::max<int64_t>(k, 1), T(1)), b(std::max<int64_t>(k, 1) * n, T(2));
  for (bool fast : {true, false}) {
    std::vector<T> c(m * n, std::numeric_limits<T>::quiet_NaN());
    const GemmShape s{m, n, k};
    if (fast) gemm<T>(s, a.data(), b.data(), c.data(), T(1), T(0));
    else gemm_ref<T>(s, a.data(), b.data(), c.data(), T(1), T(0));
    int bad = 0;
    for (int64_t i = 0; i < m * n; ++i) bad += !(c[i] == T(2 * k));
    EXPECT_EQ(bad, 0) << (fast ? "gemm" : "gemm_ref") << " k=" << k << ": " << bad << " of "
                      << m * n << " elements differ from " << 2 * k << ", e.g. C[0] = " << c[0];
  }
}
TEST(GemmEdge, BetaZeroDoesNotReadCFloat) {
  for (GemmLibrary library : {GemmLibrary::onednn, GemmLibrary::packed}) {
    beta_zero_ignores_nan<float>(5, library);
    beta_zero_ignores_nan<float>(1, library);
    beta_zero_ignores_nan<float>(600, library);  // three depth blocks of the packed GEMM
  }
}
TEST(GemmEdge, BetaZeroDoesNotReadCDouble) {
  beta_zero_ignores_nan<double>(5);
  beta_zero_ignores_nan<double>(0);
}
TEST(GemmEdge, KZeroBetaZeroDoesNotReadCFloat) {
  beta_zero_ignores_nan<float>(0, GemmLibrary::onednn);
  beta_zero_ignores_nan<float>(0, GemmLibrary::packed);
}

TEST(GemmEdge, KZeroScalesCByBeta) {
  std::vector<float> c = {1, 2, 3, 4, 5, 6}, c_ref = c;
  const GemmShape s{2, 3, 0};
  gemm<float>(s, nullptr, nullptr, c.data(), 1.f, 0.5f);
  gemm_ref<float>(s, nullptr, nullptr, c_ref.data(), 1.f, 0.5f);
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(c[i], 0.5f * (i + 1));
    EXPECT_EQ(c_ref[i], 0.5f * (i + 1));
  }
}

TEST(GemmEdge, EmptyOutputIsANoOp) {
  std::vector<float> c(4, 3.f);
  const float a = 1, b = 1;
  gemm<float>(GemmShape{0, 4, 2}, &a, &b, c.data());
  gemm<float>(GemmShape{4, 0, 2}, &a, &b, c.data());
  gemm_ref<float>(GemmShape{0, 4, 2}, &a, &b, c.data());
  for (float x : c) EXPECT_EQ(x, 3.f);
}

TEST(GemmEdge, NegativeSizeThrows) {
  std::vector<float> buf(16, 0.f);
  std::vector<double> bufd(16, 0.0);
  EXPECT_THROW(gemm<float>(GemmShape{2, 2, -1}, buf.data(), buf.data(), buf.data()), Error);
  EXPECT_THROW(gemm_ref<float>(GemmShape{2, 2, -1}, buf.data(), buf.data(), buf.data()), Error);
  EXPECT_THROW(gemm<double>(GemmShape{2, 2, -1}, bufd.data(), bufd.data(), bufd.data()), Error);
}

TEST(GemmEdge, KnownSmallProduct) {
  // [1 2; 3 4] [5 6; 7 8] = [19 22; 43 50]; with alpha 2, beta -1 on C = 1s.
  const float a[4] = {1, 2, 3, 4}, b[4] = {5, 6, 7, 8};
  float c[4] = {1, 1, 1, 1};
  gemm<float>(GemmShape{2, 2, 2}, a, b, c, 2.f, -1.f);
  EXPECT_EQ(c[0], 37.f);
  EXPECT_EQ(c[1], 43.f);
  EXPECT_EQ(c[2], 85.f);
  EXPECT_EQ(c[3], 99.f);
  // Aᵀ B: [1 3; 2 4] [5 6; 7 8] = [26 30; 38 44]
  float ct[4];
  GemmShape st{2, 2, 2};
  st.trans_a = true;
  gemm<float>(st, a, b, ct);
  EXPECT_EQ(ct[0], 26.f);
  EXPECT_EQ(ct[1], 30.f);
  EXPECT_EQ(ct[2], 38.f);
  EXPECT_EQ(ct[3], 44.f);
}

}  // namespace
}  // namespace scalelab
