#include "stop_signals.hpp"

#include <time.h>

namespace scalelab::cli {

volatile std::sig_atomic_t stop_signal = 0;

namespace {
bool handles_int = false, handles_term = false;  // set before the handlers are installed
// When the first signal came (CLOCK_MONOTONIC). One request often arrives twice: timeout(1)
// signals its child and then its whole process group, a terminal's Ctrl-C reaches the group.
// A repeat within kRepeatWindow is the same request; a later one ends the process at once.
timespec first_signal_at{};
constexpr long kRepeatWindowNs = 1'000'000'000;

long nanoseconds_since(const timespec& then) {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);  // async-signal-safe (POSIX.1-2008)
  return (now.tv_sec - then.tv_sec) * 1'000'000'000L + (now.tv_nsec - then.tv_nsec);
}
}  // namespace

extern "C" void scalelab_on_stop_signal(int sig) {
  if (stop_signal == 0) {
    stop_signal = sig;
    clock_gettime(CLOCK_MONOTONIC, &first_signal_at);
    return;
  }
  if (nanoseconds_since(first_signal_at) < kRepeatWindowNs) return;
  // A second request: the default action, now (sigaction and raise are async-signal-safe). raise
  // signals this thread, which blocks sig until the handler returns: then the default action ends
  // the process.
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  if (handles_int) sigaction(SIGINT, &dfl, nullptr);
  if (handles_term) sigaction(SIGTERM, &dfl, nullptr);
  raise(sig);
}

StopSignalHandlers::StopSignalHandlers() {
  struct sigaction sa {};
  sa.sa_handler = scalelab_on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, nullptr, &old_int_);
  sigaction(SIGTERM, nullptr, &old_term_);
  handles_int = old_int_.sa_handler != SIG_IGN;
  handles_term = old_term_.sa_handler != SIG_IGN;
  if (handles_int) sigaction(SIGINT, &sa, nullptr);
  if (handles_term) sigaction(SIGTERM, &sa, nullptr);
}

StopSignalHandlers::~StopSignalHandlers() {
  sigaction(SIGINT, &old_int_, nullptr);
  sigaction(SIGTERM, &old_term_, nullptr);
}

}  // namespace scalelab::cli
