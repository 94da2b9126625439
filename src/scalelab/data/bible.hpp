// data/bible: the King James Bible, per book, for a character-level language model.
//
// Source: Debian's bible-kjv (the `bible` program) and bible-kjv-text (its compressed data). The
// text is stored in a custom compressed format, so rather than decode it we ask the program:
// `bible -f Gen1:1-Rev22:21` prints every verse on one line as "<abbrev><chapter>:<verse> <text>"
// (-f turns pretty-printing off). A book's text is its verses' texts, verbatim, each followed by
// '\n'. Whole books are held out for validation and test (fixed lists, see kjv_*_book_names).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "scalelab/data/split.hpp"
#include "scalelab/data/vocab.hpp"

namespace scalelab {

inline constexpr const char* kBiblePackages = "bible-kjv and bible-kjv-text";

struct KjvBook {
  std::string name;          // e.g. "Genesis"
  std::string abbreviation;  // as `bible -f` prints it, e.g. "Ge"
  int64_t verses = 0;
  std::string text;  // one verse per line
};

struct KjvOptions {
  std::string program = "bible";  // the bible-kjv program (a path, or a name looked up in PATH)
  // Optional: if set, the program's output is cached in <cache_dir>/kjv-bible-f.txt and read from
  // there next time (the directory is created if needed), checked against its sha256 in
  // kjv-bible-f.txt.sha256 (a mismatch is an error). Empty = always run the program.
  std::string cache_dir;
};

// The 66 books in canonical order; throws Error naming the Debian packages if `bible` is missing
// or fails, and Error naming the line if its output is not in the expected format.
std::vector<KjvBook> load_kjv_books(const KjvOptions& options = {});
// Parses the output of `bible -f Gen1:1-Rev22:21` (exposed for tests).
std::vector<KjvBook> parse_kjv_listing(const std::string& listing);

// Canonical book names, and the fixed held-out books (about 5 % of the characters each, mixing
// narrative, poetry, prophecy, gospel and letters).
const std::vector<std::string>& kjv_book_names();
const std::vector<std::string>& kjv_valid_book_names();
const std::vector<std::string>& kjv_test_book_names();
SplitSide kjv_side_of_book(const std::string& name);  // throws Error for an unknown name

// Concatenated text of the books on one side, in canonical order.
std::string kjv_side_text(const std::vector<KjvBook>& books, SplitSide side);

// Character vocabulary (built from all books, sorted by byte) and the id streams per side.
struct CharLmStreams {
  Vocab vocab;
  std::vector<int32_t> train, valid, test;
};
CharLmStreams make_kjv_char_streams(const std::vector<KjvBook>& books);

}  // namespace scalelab
