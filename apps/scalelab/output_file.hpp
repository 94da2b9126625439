// The one check every command runs on a file it is about to write, before any long work, so a
// mistyped path fails in a second and nothing the user had is overwritten:
//   refuses a directory (or any other non-regular file), an existing file unless --force, and a path whose directory is missing.
// `flag` names the option in the message ("--out", "--predictions").
#pragma once
#include <filesystem>
#include <string>

#include "scalelab/core/error.hpp"

namespace scalelab::cli {

inline void check_output_file(const std::string& flag, const std::string& path, bool force) {
  namespace fs = std::filesystem;
  SL_CHECK(!fs::exists(path) || fs::is_regular_file(path), flag, " ", path,
           ": exists and is not a regular file");
  SL_CHECK(force || !fs::exists(path), flag, " ", path, ": file exists (pass --force to overwrite)");
  const fs::path dir = fs::path(path).parent_path();
  SL_CHECK(dir.empty() || fs::is_directory(dir), flag, " ", path, ": no directory '", dir.string(),
           "' to write it in");
}

}  // namespace scalelab::cli
