// The one check every command runs on a file it is about to write, before any long work, so a
// mistyped path fails in a second and nothing the user had is overwritten: refuses an empty path,
// a symbolic link (the atomic writer never replaces one, so --force could not succeed), a
// directory or any other non-regular file, an existing file unless --force, and a path whose
// directory is missing or not writable.
// `flag` names the option in the message ("--out", "--predictions").
#pragma once
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>

#include "scalelab/core/error.hpp"
#include "scalelab/core/quote.hpp"

namespace scalelab::cli {

inline void check_output_file(const std::string& flag, const std::string& path, bool force) {
  namespace fs = std::filesystem;
  SL_CHECK(!path.empty(), flag, " \"\": names no file (give the path of the file to write)");
  const std::string shown = flag + " " + quote_for_message(path, 300);
  std::error_code ec;
  const fs::file_status link = fs::symlink_status(path, ec);
  SL_CHECK(link.type() != fs::file_type::symlink, shown,
           ": is a symbolic link (never replaced; write to the file it points to, or remove the link)");
  const bool exists = link.type() != fs::file_type::not_found;
  SL_CHECK(!exists || link.type() == fs::file_type::regular, shown, ": exists and is not a regular file");
  SL_CHECK(force || !exists, shown, ": file exists (pass --force to overwrite)");
  const fs::path dir = fs::path(path).parent_path();
  SL_CHECK(dir.empty() || fs::is_directory(dir, ec), shown, ": no directory ",
           quote_for_message(dir.string(), 300), " to write it in");
  const std::string where = dir.empty() ? "." : dir.string();
  SL_CHECK(::access(where.c_str(), W_OK | X_OK) == 0, shown, ": its directory ",
           quote_for_message(where, 300), " is not writable (", std::strerror(errno), ")");
}

}  // namespace scalelab::cli
