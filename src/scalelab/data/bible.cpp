#include "scalelab/data/bible.hpp"

#include <sys/wait.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string_view>

#include "scalelab/core/atomic_file.hpp"
#include "scalelab/core/engine_signals.hpp"
#include "scalelab/core/error.hpp"
#include "scalelab/data/sha256.hpp"
#include "scalelab/data/text_lm.hpp"

namespace scalelab {
namespace {

struct BookName {
  const char* name;
  const char* abbreviation;  // as printed by `bible -f`
};

// Canonical order, which is also the order of `bible -f Gen1:1-Rev22:21`.
constexpr BookName kBooks[] = {
    {"Genesis", "Ge"}, {"Exodus", "Exo"}, {"Leviticus", "Lev"}, {"Numbers", "Num"},
    {"Deuteronomy", "Deu"}, {"Joshua", "Josh"}, {"Judges", "Jdgs"}, {"Ruth", "Ruth"},
    {"1 Samuel", "1Sm"}, {"2 Samuel", "2Sm"}, {"1 Kings", "1Ki"}, {"2 Kings", "2Ki"},
    {"1 Chronicles", "1Chr"}, {"2 Chronicles", "2Chr"}, {"Ezra", "Ezra"}, {"Nehemiah", "Neh"},
    {"Esther", "Est"}, {"Job", "Job"}, {"Psalms", "Psa"}, {"Proverbs", "Prv"},
    {"Ecclesiastes", "Eccl"}, {"Song of Solomon", "SSol"}, {"Isaiah", "Isa"}, {"Jeremiah", "Jer"},
    {"Lamentations", "Lam"}, {"Ezekiel", "Eze"}, {"Daniel", "Dan"}, {"Hosea", "Hos"},
    {"Joel", "Joel"}, {"Amos", "Amos"}, {"Obadiah", "Obad"}, {"Jonah", "Jonah"},
    {"Micah", "Mic"}, {"Nahum", "Nahum"}, {"Habakkuk", "Hab"}, {"Zephaniah", "Zep"},
    {"Haggai", "Hag"}, {"Zechariah", "Zec"}, {"Malachi", "Mal"}, {"Matthew", "Mat"},
    {"Mark", "Mark"}, {"Luke", "Luke"}, {"John", "John"}, {"Acts", "Acts"},
    {"Romans", "Rom"}, {"1 Corinthians", "1Cor"}, {"2 Corinthians", "2Cor"}, {"Galatians", "Gal"},
    {"Ephesians", "Eph"}, {"Philippians", "Phi"}, {"Colossians", "Col"},
    {"1 Thessalonians", "1Th"}, {"2 Thessalonians", "2Th"}, {"1 Timothy", "1Tim"},
    {"2 Timothy", "2Tim"}, {"Titus", "Titus"}, {"Philemon", "Phmn"}, {"Hebrews", "Heb"},
    {"James", "Jas"}, {"1 Peter", "1Pet"}, {"2 Peter", "2Pet"}, {"1 John", "1Jn"},
    {"2 John", "2Jn"}, {"3 John", "3Jn"}, {"Jude", "Jude"}, {"Revelation", "Rev"},
};
constexpr size_t kNumBooks = std::size(kBooks);
constexpr const char* kWholeBibleSpec = "Gen1:1-Rev22:21";
constexpr const char* kCacheFileName = "kjv-bible-f.txt";

struct VerseLine {
  std::string_view abbreviation;
  std::string_view text;
};

// Splits "<abbrev><chapter>:<verse> <text>"; returns false if the line has another shape.
bool parse_verse_line(std::string_view line, VerseLine& out) {
  auto is_digit = [](char c) { return c >= '0' && c <= '9'; };
  size_t i = 0;
  if (i < line.size() && is_digit(line[i])) ++i;  // "1Sm", "2Cor"
  while (i < line.size() && std::isalpha(static_cast<unsigned char>(line[i]))) ++i;
  const size_t abbreviation_end = i;
  if (abbreviation_end == 0 || !std::isalpha(static_cast<unsigned char>(line[i - 1]))) return false;
  const size_t chapter_start = i;
  while (i < line.size() && is_digit(line[i])) ++i;
  if (i == chapter_start || i >= line.size() || line[i] != ':') return false;
  const size_t verse_start = ++i;
  while (i < line.size() && is_digit(line[i])) ++i;
  if (i == verse_start || i >= line.size() || line[i] != ' ') return false;
  out.abbreviation = line.substr(0, abbreviation_end);
  out.text = line.substr(i + 1);
  return true;
}

std::string shell_quote(const std::string& word) {
  SL_CHECK(word.find('\'') == std::string::npos, "bible program path '", word,
           "' must not contain a single quote");
  return "'" + word + "'";
}

std::string run_bible_program(const std::string& program) {
  // The shell's own "not found" goes to /dev/null: our error below names the package instead.
  const std::string command = shell_quote(program) + " -f " + kWholeBibleSpec + " 2>/dev/null";
  FILE* pipe = nullptr;
  {
    // The caller may hold signals blocked (core/engine_signals.hpp); the child must not. Debian's
    // /bin/sh (dash) clears the mask itself, bash as /bin/sh passes it on.
    const ChildSignalMask unblocked;
    pipe = popen(command.c_str(), "r");
  }
  SL_CHECK(pipe != nullptr, "cannot start '", command, "' (popen failed)");
  std::string output;
  char buffer[1 << 16];
  for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) output.append(buffer, n);
  const bool read_failed = std::ferror(pipe) != 0;
  const int status = pclose(pipe);
  SL_CHECK(status != -1, "cannot wait for '", command, "' (pclose failed)");
  const int exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (exit_code == 127)  // the shell's "command not found"
    throw_error("the King James Bible program '", program, "' was not found: install the Debian ",
                "packages ", kBiblePackages, " (apt-get install bible-kjv bible-kjv-text)");
  SL_CHECK(exit_code == 0 && !read_failed, "'", command, "' failed (exit status ", exit_code,
           "): is the data package bible-kjv-text installed? (needs ", kBiblePackages, ")");
  SL_CHECK(!output.empty(), "'", command, "' printed nothing (needs ", kBiblePackages, ")");
  return output;
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  SL_CHECK(in.is_open(), "cannot open the KJV cache file '", path.string(), "'");
  std::ostringstream content;
  content << in.rdbuf();
  SL_CHECK(!in.bad(), "cannot read the KJV cache file '", path.string(), "'");
  return content.str();
}

const std::vector<std::string>& book_name_list() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const auto& book : kBooks) v.emplace_back(book.name);
    return v;
  }();
  return names;
}

}  // namespace

std::vector<KjvBook> parse_kjv_listing(const std::string& listing) {
  std::vector<KjvBook> books;
  std::istringstream lines(listing);
  std::string line;
  int64_t line_number = 0;
  while (std::getline(lines, line)) {
    ++line_number;
    if (line.empty()) continue;
    VerseLine verse;
    SL_CHECK(parse_verse_line(line, verse), "KJV listing line ", line_number,
             " is not '<book><chapter>:<verse> <text>': '", line.substr(0, 80), "'");
    if (books.empty() || verse.abbreviation != books.back().abbreviation) {
      // A new book must be the next one in canonical order: this catches a changed output format.
      const size_t index = books.size();
      SL_CHECK(index < kNumBooks && verse.abbreviation == kBooks[index].abbreviation,
               "KJV listing line ", line_number, ": book '", verse.abbreviation, "' where book ",
               index + 1, " ('", index < kNumBooks ? kBooks[index].abbreviation : "none",
               "') was expected");
      books.push_back({kBooks[index].name, kBooks[index].abbreviation, 0, {}});
    }
    books.back().verses += 1;
    books.back().text.append(verse.text).push_back('\n');
  }
  return books;
}

std::vector<KjvBook> load_kjv_books(const KjvOptions& options) {
  std::string listing;
  const bool cached = !options.cache_dir.empty();
  const auto cache_path = std::filesystem::path(options.cache_dir) / kCacheFileName;
  // The cache carries its sha256 beside it: a changed byte would otherwise pass the line parser
  // and silently add a character to the vocabulary. A cache without its checksum (written by an
  // older scalelab) is rebuilt from the program.
  const auto sum_path = std::filesystem::path(cache_path.string() + ".sha256");
  if (cached && std::filesystem::is_directory(cache_path))
    throw_error("the KJV cache file '", cache_path.string(), "' is a directory");
  if (cached && std::filesystem::is_regular_file(cache_path) &&
      std::filesystem::is_regular_file(sum_path)) {
    listing = read_file(cache_path);
    std::string expected = read_file(sum_path);
    while (!expected.empty() && std::isspace(static_cast<unsigned char>(expected.back()))) expected.pop_back();
    const std::string actual = sha256_hex(listing);
    SL_CHECK(actual == expected, "the KJV cache file '", cache_path.string(),
             "' fails its checksum (sha256 ", actual, ", expected ", expected, " from '",
             sum_path.string(), "'): it was changed or corrupted; delete it to rebuild it");
  } else {
    listing = run_bible_program(options.program);
    if (cached) {
      std::filesystem::create_directories(cache_path.parent_path());
      std::filesystem::remove(sum_path);  // a crash between the two writes leaves no stale checksum
      write_file_atomically(cache_path.string(), listing);
      write_file_atomically(sum_path.string(), sha256_hex(listing) + "\n");
    }
  }
  auto books = parse_kjv_listing(listing);
  SL_CHECK(books.size() == kNumBooks, "the KJV listing holds ", books.size(), " books, expected ",
           kNumBooks, cached ? " (delete the cache file '" + cache_path.string() + "'?)" : "");
  return books;
}

const std::vector<std::string>& kjv_book_names() { return book_name_list(); }

const std::vector<std::string>& kjv_valid_book_names() {
  static const std::vector<std::string> names = {"Ruth", "Proverbs", "Daniel", "Romans"};
  return names;
}

const std::vector<std::string>& kjv_test_book_names() {
  static const std::vector<std::string> names = {"Ezra", "Ecclesiastes", "Joel", "Jonah",
                                                 "Mark", "Hebrews",      "Jude"};
  return names;
}

SplitSide kjv_side_of_book(const std::string& name) {
  const auto& all = book_name_list();
  SL_CHECK(std::find(all.begin(), all.end(), name) != all.end(), "'", name,
           "' is not one of the 66 KJV book names (e.g. 'Genesis', '1 Samuel')");
  auto listed = [&](const std::vector<std::string>& v) {
    return std::find(v.begin(), v.end(), name) != v.end();
  };
  if (listed(kjv_valid_book_names())) return SplitSide::valid;
  if (listed(kjv_test_book_names())) return SplitSide::test;
  return SplitSide::train;
}

std::string kjv_side_text(const std::vector<KjvBook>& books, SplitSide side) {
  std::string text;
  for (const auto& book : books)
    if (kjv_side_of_book(book.name) == side) text += book.text;
  return text;
}

CharLmStreams make_kjv_char_streams(const std::vector<KjvBook>& books) {
  std::vector<std::string_view> texts;
  for (const auto& book : books) texts.push_back(book.text);
  CharLmStreams streams{build_char_vocab(texts), {}, {}, {}};
  streams.train = encode_chars(kjv_side_text(books, SplitSide::train), streams.vocab);
  streams.valid = encode_chars(kjv_side_text(books, SplitSide::valid), streams.vocab);
  streams.test = encode_chars(kjv_side_text(books, SplitSide::test), streams.vocab);
  return streams;
}

}  // namespace scalelab
