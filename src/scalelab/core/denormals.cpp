#include "scalelab/core/denormals.hpp"

#if defined(__x86_64__) || defined(_M_X64)
#include <xmmintrin.h>
#define SL_HAVE_MXCSR 1
#else
#define SL_HAVE_MXCSR 0
#endif

#include <omp.h>

namespace scalelab {
namespace {

#if SL_HAVE_MXCSR
constexpr unsigned kFtz = 0x8000;  // MXCSR bit 15: flush-to-zero
constexpr unsigned kDaz = 0x0040;  // MXCSR bit 6: denormals-are-zero

// Runs on every thread of the OpenMP pool (the pool's threads persist between regions, so the
// setting stays until changed), and on the calling thread, which is thread 0 of the team.
void set_on_all_threads(bool flush, unsigned caller_state) {
#pragma omp parallel
  {
    const unsigned now = _mm_getcsr();
    if (omp_get_thread_num() == 0) _mm_setcsr(flush ? (now | kFtz | kDaz) : caller_state);
    else _mm_setcsr(flush ? (now | kFtz | kDaz) : (now & ~(kFtz | kDaz)) | (caller_state & (kFtz | kDaz)));
  }
}
#endif

}  // namespace

FlushDenormals::FlushDenormals(bool enable) : enabled_(enable && supported()) {
#if SL_HAVE_MXCSR
  saved_ = _mm_getcsr();
  if (enabled_) set_on_all_threads(true, saved_);
#endif
}

FlushDenormals::~FlushDenormals() {
#if SL_HAVE_MXCSR
  if (enabled_) set_on_all_threads(false, saved_);
#endif
}

bool FlushDenormals::supported() { return SL_HAVE_MXCSR != 0; }

bool FlushDenormals::active_on_this_thread() {
#if SL_HAVE_MXCSR
  const unsigned now = _mm_getcsr();
  return (now & kFtz) && (now & kDaz);
#else
  return false;
#endif
}

}  // namespace scalelab
