// The check a command runs on an option naming an external program (--gnuplot) before any long
// work: the option must name an executable regular file, given as a path or found in PATH, so a
// mistyped name fails in a second rather than after an hour of runs.
#pragma once
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>

#include "scalelab/core/error.hpp"
#include "scalelab/core/quote.hpp"

namespace scalelab::cli {

inline bool is_executable_file(const std::filesystem::path& p) {
  std::error_code ec;
  return std::filesystem::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
}

// `what_else` says how to go without it (e.g. "or pass --no-report").
inline void check_program_option(const std::string& flag, const std::string& program, const std::string& what_else) {
  SL_CHECK(!program.empty(), flag, " \"\": names no program (give its name in PATH or a path, ", what_else, ")");
  if (program.find('/') != std::string::npos) {
    SL_CHECK(is_executable_file(program), flag, " ", quote_for_message(program, 300),
             ": not an executable file (", what_else, ")");
    return;
  }
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');)
    if (is_executable_file(std::filesystem::path(dir.empty() ? "." : dir) / program)) return;
  throw_error(flag, " ", quote_for_message(program, 300), ": no such program in PATH (", what_else, ")");
}

}  // namespace scalelab::cli
