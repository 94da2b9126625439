// SIGINT / SIGTERM for the commands that stop cleanly (train, report): the first signal sets
// stop_signal, which the library polls (the trainer writes its checkpoint and returns; the report
// kills gnuplot and writes nothing). A repeat within one second is the same request (timeout(1)
// signals its child and then its process group); a later second signal ends the process at once.
// A signal the parent set to be ignored (a background job of a script) stays ignored.
//
// The handlers run on the idle signal thread of the EngineSignalShield that main() holds
// (core/engine_signals.hpp), never on a thread that computes; the flag is read by the main thread.
#pragma once
#include <signal.h>

#include <csignal>

namespace scalelab::cli {

// The signal received (0: none); one command runs per process.
extern volatile std::sig_atomic_t stop_signal;

// Installs the handlers for the lifetime of the object and restores the previous ones.
class StopSignalHandlers {
 public:
  StopSignalHandlers();
  ~StopSignalHandlers();
  StopSignalHandlers(const StopSignalHandlers&) = delete;
  StopSignalHandlers& operator=(const StopSignalHandlers&) = delete;

 private:
  struct sigaction old_int_ {}, old_term_ {};
};

}  // namespace scalelab::cli
