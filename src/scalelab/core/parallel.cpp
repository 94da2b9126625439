#include "scalelab/core/parallel.hpp"

#include <omp.h>

#include "scalelab/core/error.hpp"

namespace scalelab {

int num_threads() { return omp_get_max_threads(); }

bool worth_a_parallel_region(int64_t n) {
  return n > 1 && omp_get_max_threads() > 1 && !omp_in_parallel();
}

void set_num_threads(int n) {
  SL_CHECK(n >= 1, "threads = ", n, " is not allowed: use an integer >= 1");
  omp_set_num_threads(n);
}

ScopedNumThreads::ScopedNumThreads(int n) : saved_(num_threads()) { set_num_threads(n); }
ScopedNumThreads::~ScopedNumThreads() { omp_set_num_threads(saved_); }

}  // namespace scalelab
