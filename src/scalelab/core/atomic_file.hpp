// core/atomic_file: write a whole file so that a reader sees the old content or the new, never a
// part: temp file in the same directory, write, check, fsync, rename over the target, fsync the
// directory. The temp file is removed on any failure; a target that exists and is not a regular
// file (a directory, a device, a symlink) is never replaced. Errors name the file.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace scalelab {

void write_file_atomically(const std::string& path, const std::string& bytes);
// The same with the content given as consecutive parts (a checkpoint's header and tensors),
// written in order without first copying them into one string.
void write_file_atomically(const std::string& path, const std::vector<std::string_view>& parts);

}  // namespace scalelab
