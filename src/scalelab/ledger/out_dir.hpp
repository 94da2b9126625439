// ledger/out_dir: the output directory of `scalelab check` (--out), checked and claimed before any
// run starts, so a mistyped or shared path fails in a second and nothing the user had is touched.
//
// Refused, with one line naming the path and the problem:
//   - an empty path (it would mean the current directory, which the guard below never saw);
//   - a path that is not a directory, or a directory holding files `check` did not write (no
//     .scalelab-ledger marker; the marker is written only once the directory is accepted);
//   - a directory that cannot be created or written (no raw `filesystem error`);
//   - a special file (FIFO, socket, device, directory) where `check` or the report reads or writes
//     a file: ledger.json, summary.md, report.html, report.md, claims/*.json, cache/*.json (a FIFO
//     would block the reader forever);
//   - a directory another `check` is writing: the directory is locked (flock on the directory
//     itself, released when the process ends, also when it is killed) for as long as the check runs.
#pragma once
#include <string>

namespace scalelab::ledger {

// Holds the lock on an accepted output directory; the lock is released on destruction.
class OutDirLock {
 public:
  OutDirLock() = default;
  explicit OutDirLock(int fd) : fd_(fd) {}
  OutDirLock(OutDirLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  OutDirLock& operator=(OutDirLock&& other) noexcept;
  OutDirLock(const OutDirLock&) = delete;
  OutDirLock& operator=(const OutDirLock&) = delete;
  ~OutDirLock();

 private:
  int fd_ = -1;
};

// The name of the file that marks a directory as written by `scalelab check`.
inline constexpr const char* kLedgerMarker = ".scalelab-ledger";

// Checks `out` as above, creates it with claims/ and cache/, locks it and writes the marker.
OutDirLock prepare_out_dir(const std::string& out);

}  // namespace scalelab::ledger
