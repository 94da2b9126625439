// core/denormals: flush subnormal floats to zero on every thread, for the length of a scope.
//
// Arithmetic on subnormal (denormal) floats takes a microcode assist on x86, about 100 cycles per
// operation instead of a few. Training produces them steadily: Adam's moments of a parameter
// whose gradient is zero (the embedding row of a rare symbol) decay geometrically, m by 0.9 and
// v by 0.98 per step, and fall below 2^-126 after a few thousand steps. On CMUdict G2P this made
// a step 1.6x slower by step 10000. Training frameworks flush them: TensorFlow sets FTZ/DAZ in
// every op, PyTorch offers torch.set_flush_denormal. Here the trainer holds a FlushDenormals for
// its run (train.flush_denormals, on by default).
//
// On x86-64 this sets MXCSR's FTZ (subnormal results become 0) and DAZ (subnormal inputs read as
// 0) on the calling thread and on each OpenMP worker, and restores the previous state at the end
// of the scope. Elsewhere it does nothing (supported() is false).
#pragma once

namespace scalelab {

class FlushDenormals {
 public:
  explicit FlushDenormals(bool enable = true);
  ~FlushDenormals();
  FlushDenormals(const FlushDenormals&) = delete;
  FlushDenormals& operator=(const FlushDenormals&) = delete;

  static bool supported();
  // Whether the calling thread currently flushes subnormals (FTZ and DAZ both set).
  static bool active_on_this_thread();

 private:
  bool enabled_ = false;
  unsigned saved_ = 0;  // the calling thread's MXCSR before
};

}  // namespace scalelab
