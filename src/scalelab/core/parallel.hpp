// core/parallel: threads through OpenMP, one place to set and query them.
#pragma once
#include <cstdint>

namespace scalelab {

// Number of worker threads used by scalelab's own kernels and by oneDNN (both use OpenMP).
int num_threads();
// Sets the thread count (n >= 1); throws Error otherwise.
void set_num_threads(int n);

// Runs body(i) for i in [0, n) across the OpenMP threads with a static schedule, so that the
// split of work (and hence every floating-point result) depends only on n and the thread count.
template <class Body>
void parallel_for(int64_t n, Body&& body) {
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) body(i);
}

}  // namespace scalelab
