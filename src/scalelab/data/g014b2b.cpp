#include "scalelab/data/g014b2b.hpp"

#include <filesystem>

#include "scalelab/core/error.hpp"
#include "scalelab/data/sha256.hpp"

#ifndef SCALELAB_SOURCE_DIR
#define SCALELAB_SOURCE_DIR "."
#endif

namespace scalelab {
namespace {

Cmudict load_side(const std::string& dir, const char* name, const std::string& sha256) {
  const std::string path = (std::filesystem::path(dir) / name).string();
  if (std::filesystem::is_directory(path))
    throw_error("g014b2b file '", path, "' is a directory, expected the dictionary file");
  if (!std::filesystem::exists(path))
    throw_error("g014b2b file '", path, "' not found (set data.g014b2b_dir to the directory ",
                "holding ", kG014b2bTrainFile, " and ", kG014b2bTestFile, ")");
  if (!sha256.empty()) {
    const std::string actual = sha256_file(path);
    SL_CHECK(actual == sha256, "g014b2b file '", path, "' fails its checksum: sha256 expected ",
             sha256, ", actual ", actual, " (the file was changed or truncated)");
  }
  Cmudict dict = read_whole_dictionary(path, "g014b2b file");
  return dict;
}

}  // namespace

std::string default_g014b2b_dir() {
  return (std::filesystem::path(SCALELAB_SOURCE_DIR) / "data" / "cmudict-g014b2b").string();
}

G014b2bSplit load_g014b2b(const G014b2bOptions& options) {
  Cmudict train = load_side(options.dir, kG014b2bTrainFile, options.train_sha256);
  Cmudict test = load_side(options.dir, kG014b2bTestFile, options.test_sha256);
  // Both lists are sorted by word: one merge pass finds a word on both sides.
  for (size_t i = 0, j = 0; i < train.entries.size() && j < test.entries.size();) {
    const std::string& a = train.entries[i].word;
    const std::string& b = test.entries[j].word;
    SL_CHECK(a != b, "g014b2b: the word '", a, "' is in both ", kG014b2bTrainFile, " and ",
             kG014b2bTestFile, " in '", options.dir, "'");
    if (a < b) ++i;
    else ++j;
  }
  G014b2bSplit out;
  const SplitOptions carve{.seed = options.seed, .valid_fraction = kG014b2bValidFraction,
                           .test_fraction = 0.0};
  for (auto& entry : train.entries) {
    if (side_of_word(entry.word, carve) == SplitSide::valid) out.split.valid.push_back(std::move(entry));
    else out.split.train.push_back(std::move(entry));
  }
  out.split.test = std::move(test.entries);
  out.train_stats = train.stats;
  out.test_stats = test.stats;
  return out;
}

}  // namespace scalelab
