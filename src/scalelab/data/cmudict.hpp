// data/cmudict: the CMU Pronouncing Dictionary as a grapheme-to-phoneme (G2P) dataset.
//
// Source: Debian's pocketsphinx-en-us, file cmudict-en-us.dict: one pronunciation per line,
// "word P1 P2 ...", alternatives as "word(2) ...", phones without stress marks.
// Parsing rules (see docs/data.md for the counts on the real file):
//   - text from '#' to the end of a line is a comment; blank lines are skipped;
//   - a trailing "(N)" on the word marks an alternative and is removed; all pronunciations of a
//     word are grouped under it, in file order, exact duplicates merged;
//   - words are lower-cased (ASCII); a word may hold only a-z, apostrophe, hyphen and period:
//     any other character (the dictionary's digits, e.g. "m1", "cat-2") drops the line;
//   - phones are upper-cased and any stress digit (AH0, as in the original CMUdict) is removed;
//     a phone that is then not [A-Z]+, or a line without phones, drops the line.
// Dropped lines are counted in CmudictStats, never silently lost.
#pragma once
#include <cstdint>
#include <istream>
#include <string>
#include <vector>

#include "scalelab/data/example.hpp"
#include "scalelab/data/vocab.hpp"

namespace scalelab {

inline constexpr const char* kCmudictDefaultPath =
    "/usr/share/pocketsphinx/model/en-us/cmudict-en-us.dict";
inline constexpr const char* kCmudictPackage = "pocketsphinx-en-us";

using Pronunciation = std::vector<std::string>;  // phones, e.g. {"K", "AE", "T"}

struct CmudictEntry {
  std::string word;                            // e.g. "cat"; its characters are the source
  std::vector<Pronunciation> pronunciations;  // at least one; the targets
};

struct CmudictStats {
  int64_t lines = 0;                    // every line read, including blank ones
  int64_t blank_or_comment_lines = 0;   // nothing left after removing the comment
  int64_t dropped_bad_word = 0;         // word holds a character outside a-z ' - .
  int64_t dropped_bad_phone = 0;        // a phone is not letters (after removing stress)
  int64_t dropped_no_phones = 0;        // a word with no pronunciation
  int64_t duplicates_merged = 0;        // a pronunciation already listed for the word
  int64_t words = 0;                    // distinct words kept
  int64_t pronunciations = 0;           // pronunciations kept (sum over words)
  std::vector<std::string> dropped_examples;  // the first few dropped lines, for the report

  int64_t dropped() const { return dropped_bad_word + dropped_bad_phone + dropped_no_phones; }
};

struct Cmudict {
  std::vector<CmudictEntry> entries;  // sorted by word
  CmudictStats stats;
};

struct CmudictOptions {
  std::string path = kCmudictDefaultPath;  // override for tests (fixture) or another copy
};

// Reads the dictionary file; a missing file throws Error naming the Debian package to install.
Cmudict load_cmudict(const CmudictOptions& options = {});
// Reads a dictionary file that must parse whole (the benchmark files, a teacher's targets): an
// Error, starting with `what` (e.g. "g014b2b file"), names the file if it cannot be opened, has a
// line that could not be parsed or holds no entry. The caller checks existence first, with its
// own advice.
Cmudict read_whole_dictionary(const std::string& path, const std::string& what);
// Parses dictionary text; source_name only labels error messages.
Cmudict parse_cmudict(std::istream& in, const std::string& source_name);

// The letter vocabulary (one token per character of the words) and the phone vocabulary, both
// sorted so that the same entries always give the same ids.
struct G2pVocabs {
  Vocab letters;
  Vocab phones;
};
G2pVocabs build_g2p_vocabs(const std::vector<CmudictEntry>& entries);

std::vector<int32_t> encode_word(const std::string& word, const Vocab& letters);
std::vector<int32_t> encode_pronunciation(const Pronunciation& phones, const Vocab& phone_vocab);
// One Example per (word, pronunciation): src = letters, tgt = phones (no <bos>/<eos>).
std::vector<Example> make_g2p_examples(const std::vector<CmudictEntry>& entries,
                                       const G2pVocabs& vocabs);

}  // namespace scalelab
