// EngineSignalShield (core/engine_signals.hpp): while it lives, the calling thread and the OpenMP
// threads block asynchronous signals, a process-directed signal is handled on the idle signal
// thread instead (also in a forked child), and a child process started meanwhile (report's
// the KJV loader's `bible`) begins with no signal blocked.
#include "scalelab/core/engine_signals.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <omp.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "scalelab/core/parallel.hpp"
#include "scalelab/report/child_process.hpp"

namespace scalelab {
namespace {

namespace fs = std::filesystem;

bool blocked_here(int sig) {
  sigset_t mask;
  pthread_sigmask(SIG_BLOCK, nullptr, &mask);
  return sigismember(&mask, sig) == 1;
}

// Runs body in a child process; returns its wait status (body's return value is the exit code).
template <class Body>
int in_child(Body body) {
  const pid_t pid = fork();
  if (pid == 0) _exit(body());
  int status = 0;
  waitpid(pid, &status, 0);
  return status;
}

pid_t this_thread_id() { return static_cast<pid_t>(syscall(SYS_gettid)); }

std::atomic<pid_t> handled_on{0};
extern "C" void record_handling_thread(int) { handled_on.store(this_thread_id()); }

// In a child: SIGUSR1 sent to the whole process while this thread is shielded. Exit 0: handled on
// another thread; 2: never handled (nothing took it within 5 s); 3: handled on this thread.
int process_signal_is_handled_elsewhere() {
  signal(SIGUSR1, record_handling_thread);
  const EngineSignalShield shield;
  kill(getpid(), SIGUSR1);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (handled_on.load() == 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  if (handled_on.load() == 0) return 2;
  return handled_on.load() == this_thread_id() ? 3 : 0;
}

TEST(EngineSignalShield, BlocksAsynchronousSignalsOnTheCallerAndRestoresAfter) {
  ASSERT_FALSE(blocked_here(SIGINT));
  {
    const EngineSignalShield shield;
    for (int sig : {SIGINT, SIGTERM, SIGALRM, SIGUSR1, SIGCHLD, SIGHUP}) EXPECT_TRUE(blocked_here(sig)) << sig;
    // Raised by the thread's own action, at that instruction or system call: left as they are.
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGPIPE}) EXPECT_FALSE(blocked_here(sig)) << sig;
  }
  EXPECT_FALSE(blocked_here(SIGINT));
  EXPECT_FALSE(blocked_here(SIGTERM));
}

TEST(EngineSignalShield, OpenMPThreadsBlockThemToo) {
  const int threads = num_threads();
  set_num_threads(2);
  std::vector<int> before(2, -1), during(2, -1);
#pragma omp parallel num_threads(2)
  before[omp_get_thread_num()] = blocked_here(SIGINT);
  if (before[1] == 1) {
    set_num_threads(threads);
    GTEST_SKIP() << "an earlier shield in this process blocked the worker for good (ctest runs each test alone)";
  }
  {
    const EngineSignalShield shield;
#pragma omp parallel num_threads(2)
    during[omp_get_thread_num()] = blocked_here(SIGINT);
  }
  set_num_threads(threads);
  EXPECT_EQ(during, (std::vector<int>{1, 1}));
}

TEST(EngineSignalShield, AProcessSignalIsHandledOnTheIdleThread) {
  const int status = in_child(process_signal_is_handled_elsewhere);
  ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0) << "2: the signal was never handled; 3: handled on the shielded thread";
}

TEST(EngineSignalShield, AForkedChildStartsItsOwnSignalThread) {
  const int status = in_child([] {
    // One OpenMP thread: libgomp's pool does not survive fork (a grandchild's parallel region
    // would wait for workers that do not exist), which is not what this test is about.
    set_num_threads(1);
    { const EngineSignalShield started_here; }  // this process's signal thread exists now
    const int grandchild = in_child(process_signal_is_handled_elsewhere);  // threads do not survive fork
    return WIFEXITED(grandchild) ? WEXITSTATUS(grandchild) : 100 + WTERMSIG(grandchild);
  });
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "2: the signal was never handled; 3: handled on the shielded thread";
}

// The SigBlk line of /proc/self/status as a child writes it.
std::string blocked_line(const fs::path& file) {
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  return line;
}

class ChildOfShieldedThread : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "scalelab-sigmask-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

// The programs run directly, not through a shell: Debian's /bin/sh (dash) clears the mask itself
// and would hide a child that inherited it; bash, /bin/sh elsewhere, keeps it.
TEST_F(ChildOfShieldedThread, GnuplotStartsWithNoSignalBlocked) {
  const fs::path log = dir_ / "child.log";
  const EngineSignalShield shield;
  const report::ProcessOutcome outcome = report::run_process({"grep", "SigBlk", "/proc/self/status"}, log, 30);
  ASSERT_TRUE(outcome.ok()) << outcome.start_error << " exit " << outcome.exit_status;
  EXPECT_EQ(blocked_line(log), "SigBlk:\t0000000000000000");
  EXPECT_TRUE(blocked_here(SIGINT));  // the parent's own mask is untouched
}

// As the KJV loader runs `bible` through popen: a child forked under ChildSignalMask.
TEST_F(ChildOfShieldedThread, AChildForkedUnderChildSignalMaskStartsWithNoSignalBlocked) {
  const fs::path out = dir_ / "mask.txt";
  const std::string out_path = out.string();
  const EngineSignalShield shield;
  pid_t pid = -1;
  {
    const ChildSignalMask unblocked;
    pid = fork();
    if (pid == 0) {
      const int fd = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (fd < 0 || dup2(fd, 1) < 0) _exit(126);
      execlp("grep", "grep", "SigBlk", "/proc/self/status", static_cast<char*>(nullptr));
      _exit(127);
    }
  }
  ASSERT_GT(pid, 0);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
  EXPECT_EQ(blocked_line(out), "SigBlk:\t0000000000000000");
  EXPECT_TRUE(blocked_here(SIGINT));  // ChildSignalMask gave the shield's mask back
}

}  // namespace
}  // namespace scalelab
