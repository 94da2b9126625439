#include "scalelab/core/engine_signals.hpp"

#include <pthread.h>
#include <unistd.h>

#include <mutex>
#include <thread>

namespace scalelab {

namespace {

// The idle thread that receives the process's signals while the engine runs; one per process
// (a forked child has none until its first shield).
void ensure_signal_taker() {
  static std::mutex mutex;
  static pid_t started_in = 0;
  const std::lock_guard<std::mutex> lock(mutex);
  if (started_in == getpid()) return;
  // Created before the caller blocks anything: it inherits the mask the caller had.
  std::thread([] {
    for (;;) pause();  // returns after each handler; the thread lives as long as the process
  }).detach();
  started_in = getpid();
}

}  // namespace

sigset_t EngineSignalShield::asynchronous_signals() {
  sigset_t set;
  sigfillset(&set);
  for (int own : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS, SIGABRT, SIGPIPE}) sigdelset(&set, own);
  return set;
}

EngineSignalShield::EngineSignalShield() {
  ensure_signal_taker();
  const sigset_t blocked = asynchronous_signals();
  pthread_sigmask(SIG_BLOCK, &blocked, &previous_);
  // The OpenMP threads that exist already (threads the runtime adds later are created by this
  // thread, blocked, and inherit its mask).
#pragma omp parallel
  pthread_sigmask(SIG_BLOCK, &blocked, nullptr);
}

EngineSignalShield::~EngineSignalShield() { pthread_sigmask(SIG_SETMASK, &previous_, nullptr); }

void clear_signal_mask_after_fork() {
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);  // the child has one thread: same as pthread_sigmask
}

ChildSignalMask::ChildSignalMask() {
  sigset_t none;
  sigemptyset(&none);
  pthread_sigmask(SIG_SETMASK, &none, &previous_);
}

ChildSignalMask::~ChildSignalMask() { pthread_sigmask(SIG_SETMASK, &previous_, nullptr); }

}  // namespace scalelab
