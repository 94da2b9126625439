// The stop-signal handlers of train and report (apps/scalelab/stop_signals.hpp): the first signal
// is a request the command polls; the same request delivered again within a second (timeout(1)
// signals its child and then its process group) changes nothing; a signal after that second
// ends the process with the signal's default action.
#include "apps/scalelab/stop_signals.hpp"
#include "scalelab/core/engine_signals.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

namespace {

using scalelab::cli::stop_signal;
using scalelab::cli::StopSignalHandlers;

// Runs body in a child process; returns its wait status.
template <class Body>
int in_child(Body body) {
  const pid_t pid = fork();
  if (pid == 0) {
    body();
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return status;
}

TEST(StopSignals, RepeatWithinASecondIsTheSameRequest) {
  const int status = in_child([] {
    StopSignalHandlers handlers;
    raise(SIGTERM);
    raise(SIGTERM);  // as timeout(1) delivers it: to the child, then to its group
    raise(SIGTERM);
    _exit(stop_signal == SIGTERM ? 7 : 8);
  });
  ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 7);
}

TEST(StopSignals, SecondRequestAfterASecondEndsTheProcess) {
  const int status = in_child([] {
    StopSignalHandlers handlers;
    raise(SIGINT);
    if (stop_signal != SIGINT) _exit(8);
    std::this_thread::sleep_for(std::chrono::milliseconds(1200));
    raise(SIGINT);
    _exit(9);  // not reached
  });
  ASSERT_TRUE(WIFSIGNALED(status)) << "exited with " << WEXITSTATUS(status);
  EXPECT_EQ(WTERMSIG(status), SIGINT);
}

TEST(StopSignals, IgnoredSignalStaysIgnored) {
  const int status = in_child([] {
    signal(SIGTERM, SIG_IGN);  // a background job of a script without job control
    StopSignalHandlers handlers;
    raise(SIGTERM);
    _exit(stop_signal == 0 ? 7 : 8);
  });
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 7);
}

TEST(StopSignals, HandlersRestoredOnDestruction) {
  struct sigaction before {}, after {};
  sigaction(SIGTERM, nullptr, &before);
  { StopSignalHandlers handlers; }
  sigaction(SIGTERM, nullptr, &after);
  EXPECT_EQ(before.sa_handler, after.sa_handler);
}

// As main() runs every command: shielded, so the handlers run on the idle signal thread while the
// main thread, which polls the flag, keeps SIGINT blocked.
TEST(StopSignals, UnderTheShieldTheSignalThreadSetsTheFlag) {
  const int status = in_child([] {
    const scalelab::EngineSignalShield shield;
    StopSignalHandlers handlers;
    kill(getpid(), SIGINT);  // as Ctrl-C or timeout(1) sends it: to the process
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (stop_signal == 0 && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    sigset_t mask;
    pthread_sigmask(SIG_BLOCK, nullptr, &mask);
    if (!sigismember(&mask, SIGINT)) _exit(9);
    _exit(stop_signal == SIGINT ? 7 : 8);
  });
  ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 7) << "8: the flag was never set; 9: the main thread took SIGINT";
}

TEST(StopSignals, UnderTheShieldASecondRequestStillEndsTheProcess) {
  const int status = in_child([] {
    const scalelab::EngineSignalShield shield;
    StopSignalHandlers handlers;
    kill(getpid(), SIGTERM);
    std::this_thread::sleep_for(std::chrono::milliseconds(1200));
    if (stop_signal != SIGTERM) _exit(8);
    kill(getpid(), SIGTERM);
    std::this_thread::sleep_for(std::chrono::seconds(5));
    _exit(9);  // not reached
  });
  ASSERT_TRUE(WIFSIGNALED(status)) << "exited with " << WEXITSTATUS(status);
  EXPECT_EQ(WTERMSIG(status), SIGTERM);
}

}  // namespace
