// data/g014b2b: the standard CMUdict G2P benchmark split ("g014b2b", the train/test split of the
// published G2P results), shipped in data/cmudict-g014b2b/ (README.md there: origin, licence).
//
// Format: one pronunciation per line, "WORD<TAB>PH1 PH2 ...", upper case, stress-free phones; a
// word with several pronunciations has one line per variant. The files are parsed with
// parse_cmudict (so words are lower-cased and the variants of a word grouped in file order) and
// checked against their sha256 first: a changed file is an Error naming it, the expected and the
// actual digest. No word may be on both sides. The validation set is carved from the train file
// by word with the project's stable hash (side_of_word, split.hpp): the same 5 % of words as the
// hash split's valid side, all pronunciations of a word on one side. The test file is never cut.
#pragma once
#include <string>
#include <vector>

#include "scalelab/data/cmudict.hpp"
#include "scalelab/data/split.hpp"

namespace scalelab {

inline constexpr const char* kG014b2bTrainFile = "g014b2b.train";
inline constexpr const char* kG014b2bTestFile = "g014b2b.test";
inline constexpr const char* kG014b2bTrainSha256 =
    "5882433c3a14a9a0614b5f724ce74872851092e816852c82d6b74913b2085384";
inline constexpr const char* kG014b2bTestSha256 =
    "9beeeed7726f4954bee1dbb3c5b41f50a71227557eca70b259fbd63c9cad1bb9";
inline constexpr double kG014b2bValidFraction = 0.05;  // of the train file's words

// <source dir>/data/cmudict-g014b2b, the source dir fixed at build time (SCALELAB_SOURCE_DIR).
std::string default_g014b2b_dir();

struct G014b2bOptions {
  std::string dir = default_g014b2b_dir();
  std::string train_sha256 = kG014b2bTrainSha256;  // "" skips the check (tests only)
  std::string test_sha256 = kG014b2bTestSha256;
  uint64_t seed = 20170612;  // seed of the hash that carves the valid words out of train
};

struct G014b2bSplit {
  G2pSplit split;                    // train (minus valid), valid (carved), test; sorted by word
  CmudictStats train_stats, test_stats;
};

// Throws Error if a file is missing, fails its checksum, has a dropped line or shares a word
// with the other file.
G014b2bSplit load_g014b2b(const G014b2bOptions& options = {});

}  // namespace scalelab
