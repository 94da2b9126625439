// FlushDenormals: subnormal results become 0 on the calling thread and on every OpenMP worker
// while the guard lives, and come back afterwards.
#include <gtest/gtest.h>

#include <cfloat>
#include <vector>

#include <omp.h>

#include "scalelab/core/denormals.hpp"
#include "scalelab/core/parallel.hpp"

namespace scalelab {
namespace {

// FLT_MIN / 4 is subnormal; computed at run time so that the compiler cannot fold it.
float quarter_of(volatile float x) { return x * 0.25f; }

// Per thread of a 2-thread team: whether a subnormal result survived.
std::vector<int> subnormal_survives_per_thread() {
  std::vector<int> out(2, -1);
#pragma omp parallel num_threads(2)
  out[omp_get_thread_num()] = quarter_of(FLT_MIN) != 0.0f;
  return out;
}

TEST(FlushDenormals, FlushesOnEveryThreadInScopeAndRestoresAfter) {
  if (!FlushDenormals::supported()) GTEST_SKIP() << "no MXCSR on this processor";
  const int threads = num_threads();
  set_num_threads(2);
  ASSERT_FALSE(FlushDenormals::active_on_this_thread());
  EXPECT_NE(quarter_of(FLT_MIN), 0.0f);
  {
    const FlushDenormals guard;
    EXPECT_TRUE(FlushDenormals::active_on_this_thread());
    EXPECT_EQ(quarter_of(FLT_MIN), 0.0f);
    EXPECT_EQ(subnormal_survives_per_thread(), (std::vector<int>{0, 0}));
  }
  EXPECT_FALSE(FlushDenormals::active_on_this_thread());
  EXPECT_NE(quarter_of(FLT_MIN), 0.0f);
  EXPECT_EQ(subnormal_survives_per_thread(), (std::vector<int>{1, 1}));
  set_num_threads(threads);
}

TEST(FlushDenormals, DisabledGuardChangesNothing) {
  {
    const FlushDenormals guard(false);
    EXPECT_FALSE(FlushDenormals::active_on_this_thread());
    EXPECT_NE(quarter_of(FLT_MIN), 0.0f);
  }
  EXPECT_FALSE(FlushDenormals::active_on_this_thread());
}

}  // namespace
}  // namespace scalelab
