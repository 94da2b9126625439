// report/child_process: run a program to completion with its output in a log file, and a private
// temporary directory. Used to run gnuplot; nothing here knows about plots.
#pragma once
#include <csignal>
#include <filesystem>
#include <string>
#include <vector>

namespace scalelab::report {

struct ProcessOutcome {
  bool started = false;   // false: exec failed, start_error says why
  std::string start_error;
  bool timed_out = false;  // killed after the time limit
  bool stopped = false;    // killed because *stop became non-zero (a SIGINT / SIGTERM)
  bool exited = false;     // normal exit (else killed by `signal`)
  int exit_status = -1;
  int signal = 0;
  bool ok() const { return started && !timed_out && !stopped && exited && exit_status == 0; }
};

// Runs argv[0] (searched in PATH) with stdin from /dev/null and stdout and stderr into log_path,
// in a process group of its own; kills the whole group (so also anything it started) after
// timeout_seconds, or as soon as *stop is non-zero (stop may be null). Returns only once the
// child is reaped. Throws Error only when no process can be created at all.
ProcessOutcome run_process(const std::vector<std::string>& argv, const std::filesystem::path& log_path,
                           double timeout_seconds, const volatile std::sig_atomic_t* stop = nullptr);

// A fresh private directory under the system's temp dir, removed with everything in it when this
// goes out of scope.
class TempDir {
 public:
  explicit TempDir(const std::string& prefix);
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace scalelab::report
