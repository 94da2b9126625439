#include "scalelab/report/child_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "scalelab/core/engine_signals.hpp"
#include "scalelab/core/error.hpp"

namespace scalelab::report {

namespace fs = std::filesystem;

ProcessOutcome run_process(const std::vector<std::string>& argv, const fs::path& log_path,
                           double timeout_seconds, const volatile std::sig_atomic_t* stop) {
  SL_CHECK(!argv.empty() && !argv[0].empty(), "run_process: no program to run");
  // Everything the child needs is prepared before fork: the parent may have other threads (OpenMP),
  // so the child must not allocate.
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const std::string log = log_path.string();

  int err_pipe[2];
  SL_CHECK(pipe2(err_pipe, O_CLOEXEC) == 0, "pipe2 failed: ", std::strerror(errno));
  const pid_t pid = fork();
  if (pid < 0) {
    const int e = errno;
    close(err_pipe[0]);
    close(err_pipe[1]);
    throw_error("cannot start ", argv[0], ": fork failed: ", std::strerror(e));
  }
  if (pid == 0) {
    setpgid(0, 0);  // its own group: a timeout or a signal kills gnuplot and whatever it started
    const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
    }
    const int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, 0);
    clear_signal_mask_after_fork();  // the parent computes with signals blocked; gnuplot must not
    execvp(args[0], args.data());
    const int e = errno;  // exec failed: tell the parent why through the close-on-exec pipe
    (void)!write(err_pipe[1], &e, sizeof e);
    _exit(127);
  }
  setpgid(pid, pid);  // also from the parent, so the group exists before any kill below
  close(err_pipe[1]);
  int exec_errno = 0;
  ssize_t got;
  do got = read(err_pipe[0], &exec_errno, sizeof exec_errno);
  while (got < 0 && errno == EINTR);
  close(err_pipe[0]);

  ProcessOutcome out;
  out.started = got != static_cast<ssize_t>(sizeof exec_errno);
  if (!out.started) out.start_error = std::strerror(exec_errno);
  int status = 0;
  const auto start = std::chrono::steady_clock::now();
  const auto kill_group = [&] {
    kill(-pid, SIGKILL);  // the child is not reaped yet, so its group id is still its own
    kill(pid, SIGKILL);   // in case the group was not made yet
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  };
  for (;;) {
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) throw_error("waitpid for ", argv[0], " failed: ", std::strerror(errno));
    if (stop && *stop) {
      kill_group();
      out.stopped = true;
      return out;
    }
    if (std::chrono::steady_clock::now() - start > std::chrono::duration<double>(timeout_seconds)) {
      kill_group();
      out.timed_out = true;
      return out;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  out.exited = WIFEXITED(status);
  out.exit_status = out.exited ? WEXITSTATUS(status) : -1;
  out.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  return out;
}

TempDir::TempDir(const std::string& prefix) {
  std::string pattern = (fs::temp_directory_path() / (prefix + "XXXXXX")).string();
  SL_CHECK(mkdtemp(pattern.data()) != nullptr, "cannot create a temporary directory ", pattern, ": ",
           std::strerror(errno));
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

}  // namespace scalelab::report
