// core/parallel: threads through OpenMP, one place to set and query them.
#pragma once
#include <cstdint>

namespace scalelab {

// Number of worker threads used by scalelab's own kernels and by oneDNN (both use OpenMP).
int num_threads();
// Sets the thread count (n >= 1); throws Error otherwise.
void set_num_threads(int n);

// Sets the calling thread's OpenMP thread count for a scope and restores the previous count, so
// that one run's setting does not leak into the next (OpenMP keeps the count per calling thread).
class ScopedNumThreads {
 public:
  explicit ScopedNumThreads(int n);
  ~ScopedNumThreads();
  ScopedNumThreads(const ScopedNumThreads&) = delete;
  ScopedNumThreads& operator=(const ScopedNumThreads&) = delete;

 private:
  int saved_;
};

// False when a parallel region over n items could only run on one thread: n <= 1, one thread
// set, or already inside a parallel region (nested regions get one thread).
bool worth_a_parallel_region(int64_t n);

// Runs body(i) for i in [0, n) across the OpenMP threads with a static schedule, so that the
// split of work (and hence every floating-point result) depends only on n and the thread count.
// Where only one thread could run it, the loop runs inline: a region of one thread still sets up
// a libgomp team. (The 3 % "OpenMP" share of the small model's step was the flash kernel's
// dynamic schedule, not this: docs/performance.md.) The bodies are independent (each i writes its
// own outputs), so the results are the same.
template <class Body>
void parallel_for(int64_t n, Body&& body) {
  if (!worth_a_parallel_region(n)) {
    for (int64_t i = 0; i < n; ++i) body(i);
    return;
  }
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; ++i) body(i);
}

}  // namespace scalelab
