#include "scalelab/ledger/out_dir.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "scalelab/core/atomic_file.hpp"
#include "scalelab/core/error.hpp"
#include "scalelab/core/quote.hpp"

namespace fs = std::filesystem;

namespace scalelab::ledger {
namespace {

const char* type_name(fs::file_type type) {
  switch (type) {
    case fs::file_type::directory: return "a directory";
    case fs::file_type::fifo: return "a FIFO";
    case fs::file_type::socket: return "a socket";
    case fs::file_type::block:
    case fs::file_type::character: return "a device";
    case fs::file_type::symlink: return "a symbolic link";
    case fs::file_type::regular: return "a regular file";
    default: return "a special file";
  }
}

// The path as the messages show it.
std::string shown(const std::string& out) { return "--out " + quote_for_message(out, 300); }

// Refuses `file` (inside the output directory) if it exists and is not a regular file.
void require_regular_or_missing(const std::string& out, const fs::path& file, const std::string& name) {
  std::error_code ec;
  const fs::file_status s = fs::symlink_status(file, ec);
  if (ec || s.type() == fs::file_type::not_found || s.type() == fs::file_type::regular) return;
  throw_error(shown(out), ": ", quote_for_message(name, 300), " is ", type_name(s.type()),
              ", not a file scalelab check writes; remove it or choose another directory");
}

// Refuses a directory entry of `sub` (claims/, cache/) that is not a regular file.
void require_regular_entries(const std::string& out, const fs::path& dir, const char* sub) {
  const fs::path path = dir / sub;
  std::error_code ec;
  const fs::file_status s = fs::symlink_status(path, ec);
  if (ec || s.type() == fs::file_type::not_found) return;
  SL_CHECK(s.type() == fs::file_type::directory, shown(out), ": ", sub, " is ", type_name(s.type()),
           ", expected the directory scalelab check writes");
  for (fs::directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec))
    require_regular_or_missing(out, it->path(), std::string(sub) + "/" + it->path().filename().string());
  SL_CHECK(!ec, shown(out), ": cannot list ", sub, "/ (", ec.message(), ")");
}

void create_directory(const std::string& out, const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  SL_CHECK(!ec, shown(out), ": cannot create the directory ", quote_for_message(dir.string(), 300), " (",
           ec.message(), ")");
}

}  // namespace

OutDirLock& OutDirLock::operator=(OutDirLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

OutDirLock::~OutDirLock() {
  if (fd_ >= 0) ::close(fd_);  // closing the last descriptor releases the flock
}

OutDirLock prepare_out_dir(const std::string& out) {
  SL_CHECK(!out.empty(), "--out \"\": names no directory (give the directory to write the ledger in, "
           "e.g. --out scalelab-report)");
  const fs::path dir(out);
  std::error_code ec;
  const fs::file_status s = fs::status(dir, ec);
  if (s.type() != fs::file_type::not_found) {
    SL_CHECK(!ec, shown(out), ": cannot be read (", ec.message(), ")");
    SL_CHECK(s.type() == fs::file_type::directory, shown(out), ": exists and is not a directory");
    const bool empty = fs::is_empty(dir, ec);
    SL_CHECK(!ec, shown(out), ": cannot list the directory (", ec.message(), ")");
    SL_CHECK(empty || fs::symlink_status(dir / kLedgerMarker, ec).type() == fs::file_type::regular,
             shown(out), ": holds files that scalelab check did not write (no ", kLedgerMarker,
             "); choose an empty or new directory");
    SL_CHECK(::access(out.c_str(), W_OK | X_OK) == 0, shown(out), ": not writable (",
             std::strerror(errno), ")");
    for (const char* name : {"ledger.json", "summary.md", "report.html", "report.md"})
      require_regular_or_missing(out, dir / name, name);
    require_regular_entries(out, dir, "claims");
    require_regular_entries(out, dir, "cache");
  }
  create_directory(out, dir);
  // Lock before writing anything into it: a second check on the same directory stops here.
  const int fd = ::open(out.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  SL_CHECK(fd >= 0, shown(out), ": cannot be opened (", std::strerror(errno), ")");
  OutDirLock lock(fd);
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    SL_CHECK(errno != EWOULDBLOCK, shown(out), ": another scalelab check is writing this directory; "
             "wait for it to end or choose another --out");
    throw_error(shown(out), ": cannot be locked (", std::strerror(errno), ")");
  }
  create_directory(out, dir / "claims");
  create_directory(out, dir / "cache");
  if (!fs::exists(dir / kLedgerMarker, ec))
    write_file_atomically((dir / kLedgerMarker).string(), "written by scalelab check\n");
  return lock;
}

}  // namespace scalelab::ledger
