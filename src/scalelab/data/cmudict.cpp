#include "scalelab/data/cmudict.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "scalelab/core/error.hpp"

namespace scalelab {
namespace {

constexpr size_t kMaxDroppedExamples = 20;

bool is_word_char(char c) { return (c >= 'a' && c <= 'z') || c == '\'' || c == '-' || c == '.'; }

// Removes a trailing "(N)" alternative marker, if any.
std::string strip_alternative_marker(const std::string& token) {
  if (token.size() < 3 || token.back() != ')') return token;
  const size_t open = token.rfind('(');
  if (open == std::string::npos || open == 0 || open + 2 > token.size() - 1) return token;
  for (size_t i = open + 1; i + 1 < token.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(token[i]))) return token;
  return token.substr(0, open);
}

// Upper-cases and removes stress digits; returns false if the result is not [A-Z]+.
bool normalise_phone(std::string& phone) {
  std::string out;
  for (char c : phone) {
    if (std::isdigit(static_cast<unsigned char>(c))) continue;
    out += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  phone = out;
  return !out.empty() && std::all_of(out.begin(), out.end(), [](char c) { return c >= 'A' && c <= 'Z'; });
}

}  // namespace

Cmudict parse_cmudict(std::istream& in, const std::string& source_name) {
  Cmudict dict;
  CmudictStats& stats = dict.stats;
  std::map<std::string, std::vector<Pronunciation>> grouped;  // sorted by word
  auto drop = [&](int64_t& counter, const std::string& line) {
    ++counter;
    if (stats.dropped_examples.size() < kMaxDroppedExamples) stats.dropped_examples.push_back(line);
  };

  std::string line;
  while (std::getline(in, line)) {
    ++stats.lines;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const std::string content = line.substr(0, line.find('#'));
    std::istringstream fields(content);
    std::string head;
    if (!(fields >> head)) {
      ++stats.blank_or_comment_lines;
      continue;
    }
    std::string word = strip_alternative_marker(head);
    std::transform(word.begin(), word.end(), word.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (!std::all_of(word.begin(), word.end(), is_word_char)) {
      drop(stats.dropped_bad_word, line);
      continue;
    }
    Pronunciation phones;
    bool phones_ok = true;
    for (std::string phone; fields >> phone;) {
      phones_ok = phones_ok && normalise_phone(phone);
      phones.push_back(phone);
    }
    if (phones.empty()) {
      drop(stats.dropped_no_phones, line);
      continue;
    }
    if (!phones_ok) {
      drop(stats.dropped_bad_phone, line);
      continue;
    }
    auto& pronunciations = grouped[word];
    if (std::find(pronunciations.begin(), pronunciations.end(), phones) != pronunciations.end()) {
      ++stats.duplicates_merged;
      continue;
    }
    pronunciations.push_back(std::move(phones));
  }
  SL_CHECK(!in.bad(), "read error in CMUdict file '", source_name, "' after ", stats.lines,
           " lines");

  dict.entries.reserve(grouped.size());
  for (auto& [word, pronunciations] : grouped) {
    stats.pronunciations += static_cast<int64_t>(pronunciations.size());
    dict.entries.push_back({word, std::move(pronunciations)});
  }
  stats.words = static_cast<int64_t>(dict.entries.size());
  return dict;
}

Cmudict load_cmudict(const CmudictOptions& options) {
  if (std::filesystem::is_directory(options.path))
    throw_error("CMUdict file '", options.path, "' is a directory: pass the path of the dictionary file");
  if (!std::filesystem::exists(options.path))
    throw_error("CMUdict file '", options.path, "' not found: install the Debian package ",
                kCmudictPackage, " (apt-get install ", kCmudictPackage,
                ") or pass the path of another copy");
  std::ifstream in(options.path);
  SL_CHECK(in.is_open(), "cannot open CMUdict file '", options.path, "' (it exists: permissions?)");
  Cmudict dict = parse_cmudict(in, options.path);
  SL_CHECK(!dict.entries.empty(), "CMUdict file '", options.path, "' holds no usable entry (",
           dict.stats.lines, " lines read, ", dict.stats.dropped(), " dropped)");
  return dict;
}

Cmudict read_whole_dictionary(const std::string& path, const std::string& what) {
  std::ifstream in(path);
  SL_CHECK(in.is_open(), "cannot open ", what, " '", path, "'");
  Cmudict dict = parse_cmudict(in, path);
  SL_CHECK(dict.stats.dropped() == 0, what, " '", path, "': ", dict.stats.dropped(),
           " lines could not be parsed, e.g. '",
           dict.stats.dropped_examples.empty() ? "" : dict.stats.dropped_examples.front(), "'");
  SL_CHECK(!dict.entries.empty(), what, " '", path, "' holds no entry");
  return dict;
}

G2pVocabs build_g2p_vocabs(const std::vector<CmudictEntry>& entries) {
  std::set<std::string> letters, phones;  // std::set: sorted, hence deterministic ids
  for (const auto& entry : entries) {
    for (char c : entry.word) letters.insert(std::string(1, c));
    for (const auto& pronunciation : entry.pronunciations)
      phones.insert(pronunciation.begin(), pronunciation.end());
  }
  return {Vocab({letters.begin(), letters.end()}), Vocab({phones.begin(), phones.end()})};
}

std::vector<int32_t> encode_word(const std::string& word, const Vocab& letters) {
  std::vector<int32_t> ids;
  ids.reserve(word.size());
  for (char c : word) ids.push_back(letters.id(std::string(1, c)));
  return ids;
}

std::vector<int32_t> encode_pronunciation(const Pronunciation& phones, const Vocab& phone_vocab) {
  std::vector<int32_t> ids;
  ids.reserve(phones.size());
  for (const auto& phone : phones) ids.push_back(phone_vocab.id(phone));
  return ids;
}

std::vector<Example> make_g2p_examples(const std::vector<CmudictEntry>& entries,
                                       const G2pVocabs& vocabs) {
  std::vector<Example> examples;
  for (const auto& entry : entries) {
    const auto src = encode_word(entry.word, vocabs.letters);
    for (const auto& pronunciation : entry.pronunciations)
      examples.push_back({src, encode_pronunciation(pronunciation, vocabs.phones)});
  }
  return examples;
}

}  // namespace scalelab
