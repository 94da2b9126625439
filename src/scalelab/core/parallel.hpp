// core/parallel: threads through OpenMP, one place to set and query them.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>

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
// dynamic schedule, not this: perf of the small step, 1 thread.) The bodies are independent (each i writes its
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

// An element-wise pass over n elements (a copy, a residual sum, zeroing a gradient): body(begin,
// end) on chunks of kElementChunk elements, the chunks split across the threads by parallel_for.
// Why: at 2 threads a serial pass over a step's activations is time the second thread spins
// (perf put the spinning at 16-20 % of the small model's step). Each element is computed alone, so
// the result does not depend on the split.
inline constexpr int64_t kElementChunk = int64_t{1} << 14;
template <class Body>
void parallel_elements(int64_t n, Body&& body) {
  parallel_for((n + kElementChunk - 1) / kElementChunk, [&](int64_t chunk) {
    const int64_t begin = chunk * kElementChunk;
    body(begin, std::min(n, begin + kElementChunk));
  });
}

// dst[i] = src[i], i < n (no overlap), across the threads.
template <class T>
void parallel_copy(const T* src, T* dst, int64_t n) {
  parallel_elements(n, [&](int64_t b, int64_t e) {
    std::memcpy(dst + b, src + b, static_cast<size_t>(e - b) * sizeof(T));
  });
}

// x[i] = 0, i < n, across the threads.
template <class T>
void parallel_zero(T* x, int64_t n) {
  parallel_elements(n, [&](int64_t b, int64_t e) {
    std::memset(x + b, 0, static_cast<size_t>(e - b) * sizeof(T));
  });
}

}  // namespace scalelab
