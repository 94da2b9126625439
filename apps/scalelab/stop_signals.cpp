#include "stop_signals.hpp"

namespace scalelab::cli {

volatile std::sig_atomic_t stop_signal = 0;

namespace {
bool handles_int = false, handles_term = false;  // set before the handlers are installed
}  // namespace

extern "C" void scalelab_on_stop_signal(int sig) {
  stop_signal = sig;
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  if (handles_int) sigaction(SIGINT, &dfl, nullptr);  // async-signal-safe
  if (handles_term) sigaction(SIGTERM, &dfl, nullptr);
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
