// The stop-signal handlers of train and report (apps/scalelab/stop_signals.hpp): the first signal
// is a request the command polls; the same request delivered again within a second (timeout(1)
// signals its child and then its process group) changes nothing; a signal after that second
// ends the process with the signal's default action.
#include "apps/scalelab/stop_signals.hpp"

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

}  // namespace
