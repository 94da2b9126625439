// One call into the engine at a time. The engine keeps process-wide state during a call (the
// OpenMP thread count, the denormal mode, the SIMD target), so two Python threads calling at once
// are serialised: the second waits, with the GIL released, until the first returns. A call made
// from inside another call on the same thread (a train() callback calling Model.logits) would
// wait for itself; it is refused with BusyError instead.
//
// While it is held, signals stay off the threads that run the engine
// (scalelab/core/engine_signals.hpp).
//
// Construct it after releasing the GIL: the holder of the engine may need the GIL for a callback.
#pragma once
#include <atomic>
#include <mutex>
#include <string>
#include <thread>

#include "scalelab/core/engine_signals.hpp"
#include "errors.hpp"

namespace scalelab::python {

class ExclusiveCall {
 public:
  explicit ExclusiveCall(const char* what) {
    if (owner().load() == std::this_thread::get_id())
      throw BusyError(std::string("scalelab.") + what +
                      ": called from inside another scalelab call on this thread (a train() "
                      "callback); call it after that call returns");
    engine().lock();
    owner().store(std::this_thread::get_id());
  }
  ~ExclusiveCall() {
    owner().store(std::thread::id());
    engine().unlock();
  }
  ExclusiveCall(const ExclusiveCall&) = delete;
  ExclusiveCall& operator=(const ExclusiveCall&) = delete;

 private:
  EngineSignalShield shield_;  // first in, last out: the whole call runs shielded

  static std::mutex& engine() {
    static std::mutex m;
    return m;
  }
  static std::atomic<std::thread::id>& owner() {
    static std::atomic<std::thread::id> id;
    return id;
  }
};

}  // namespace scalelab::python
