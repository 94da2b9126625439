#include "scalelab/data/predictions.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "scalelab/core/error.hpp"
#include "scalelab/core/quote.hpp"

namespace scalelab {

namespace {

constexpr const char* kReferenceSeparator = " | ";

std::string joined(const Pronunciation& phones) {
  std::string out;
  for (size_t i = 0; i < phones.size(); ++i) out += (i ? " " : "") + phones[i];
  return out;
}

// Splits on `separator`, keeping empty pieces ("a\t\tb" has three).
std::vector<std::string> split(const std::string& text, const std::string& separator) {
  std::vector<std::string> pieces;
  size_t start = 0;
  for (size_t at; (at = text.find(separator, start)) != std::string::npos; start = at + separator.size())
    pieces.push_back(text.substr(start, at - start));
  pieces.push_back(text.substr(start));
  return pieces;
}

// Phones separated by single spaces; Error (via `where`) on an empty phone (two spaces, a
// leading or trailing space), which the writer never produces.
Pronunciation phones_of(const std::string& text, const std::string& where, const std::string& what) {
  if (text.empty()) return {};
  Pronunciation phones = split(text, " ");
  for (const std::string& p : phones)
    SL_CHECK(!p.empty(), where, ": ", what, " ", quote_for_message(text), " has an empty phone (phones are separated by one space)");
  return phones;
}

double share(int64_t count, int64_t words) {
  SL_CHECK(words > 0, "agreement of no words");
  return static_cast<double>(count) / static_cast<double>(words);
}

}  // namespace

std::vector<WordPrediction> score_predictions(const std::vector<CmudictEntry>& entries,
                                              const std::vector<Pronunciation>& hypotheses) {
  SL_CHECK(entries.size() == hypotheses.size(), "score_predictions: ", entries.size(),
           " words but ", hypotheses.size(), " hypotheses");
  std::vector<WordPrediction> rows;
  rows.reserve(entries.size());
  for (size_t i = 0; i < entries.size(); ++i)
    rows.push_back({entries[i].word, hypotheses[i], entries[i].pronunciations,
                    score_word(hypotheses[i], entries[i].pronunciations)});
  return rows;
}

std::string format_predictions(const std::vector<WordPrediction>& rows,
                               const std::vector<std::string>& comment) {
  std::string out;
  for (const std::string& line : comment) out += "# " + line + "\n";
  for (const WordPrediction& r : rows) {
    out += r.word + '\t' + joined(r.hypothesis) + '\t' + (r.score.correct ? "right" : "wrong") +
           '\t' + std::to_string(r.score.distance) + '\t';
    for (size_t i = 0; i < r.references.size(); ++i)
      out += (i ? kReferenceSeparator : "") + joined(r.references[i]);
    out += '\n';
  }
  return out;
}

std::vector<WordPrediction> parse_predictions(const std::string& text, const std::string& source) {
  std::vector<WordPrediction> rows;
  std::istringstream in(text);
  int64_t line_number = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_number;
    if (line.empty() || line[0] == '#') continue;
    const std::string where = "predictions " + quote_for_message(source) + ", line " + std::to_string(line_number);
    const std::vector<std::string> columns = split(line, "\t");
    SL_CHECK(columns.size() == 5, where, ": ", columns.size(),
             " tab-separated columns, expected 5 (word, hypothesis, right|wrong, edits, references)");
    WordPrediction r;
    r.word = columns[0];
    SL_CHECK(!r.word.empty(), where, ": empty word");
    r.hypothesis = phones_of(columns[1], where, "hypothesis");
    for (const std::string& ref : split(columns[4], kReferenceSeparator)) {
      SL_CHECK(!ref.empty(), where, ": empty reference pronunciation in ", quote_for_message(columns[4]));
      r.references.push_back(phones_of(ref, where, "reference"));
    }
    r.score = score_word(r.hypothesis, r.references);
    const std::string verdict = r.score.correct ? "right" : "wrong";
    SL_CHECK(columns[2] == verdict, where, ": word ", quote_for_message(r.word), " is marked ", quote_for_message(columns[2]),
             " but its hypothesis is ", verdict, " against its references");
    SL_CHECK(columns[3] == std::to_string(r.score.distance), where, ": word ", quote_for_message(r.word), " has edits ",
             quote_for_message(columns[3]), " but its hypothesis is ", r.score.distance, " edits from the closest reference");
    rows.push_back(std::move(r));
  }
  SL_CHECK(!rows.empty(), "predictions ", quote_for_message(source), ": no word (write them with scalelab eval --predictions)");
  return rows;
}

std::vector<WordPrediction> read_predictions(const std::string& path) {
  SL_CHECK(!std::filesystem::is_directory(path), "predictions ", quote_for_message(path), " is a directory, expected a file");
  SL_CHECK(std::filesystem::exists(path), "predictions ", quote_for_message(path),
           " not found (write them with scalelab eval --predictions)");
  std::ifstream in(path, std::ios::binary);
  SL_CHECK(in.good(), "predictions ", quote_for_message(path), " could not be opened");
  std::ostringstream text;
  text << in.rdbuf();
  SL_CHECK(!in.bad(), "predictions ", quote_for_message(path), " could not be read");
  return parse_predictions(text.str(), path);
}

double Agreement::first_wer() const {
  return share(only_second_right + both_wrong_same + both_wrong_different, words);
}
double Agreement::second_wer() const {
  return share(only_first_right + both_wrong_same + both_wrong_different, words);
}
double Agreement::oracle_wer() const { return share(both_wrong_same + both_wrong_different, words); }

Agreement compare_predictions(const std::vector<WordPrediction>& first,
                              const std::vector<WordPrediction>& second) {
  SL_CHECK(first.size() == second.size(), "the predictions hold ", first.size(), " and ",
           second.size(), " words: compare the same split scored alike (--split, --every, --limit)");
  Agreement a;
  for (size_t i = 0; i < first.size(); ++i) {
    const WordPrediction& x = first[i];
    const WordPrediction& y = second[i];
    SL_CHECK(x.word == y.word, "the predictions differ at word ", i + 1, ": ", quote_for_message(x.word), " against ",
             quote_for_message(y.word), ": compare the same split scored alike (--split, --every, --limit)");
    SL_CHECK(x.references == y.references, "the predictions give the word ", quote_for_message(x.word),
             " different references: they come from different dictionaries or splits");
    ++a.words;
    const bool same = x.hypothesis == y.hypothesis;
    a.same_output += same;
    if (x.score.correct && y.score.correct) ++a.both_right;
    else if (x.score.correct) ++a.only_first_right;
    else if (y.score.correct) ++a.only_second_right;
    else if (same) ++a.both_wrong_same;
    else ++a.both_wrong_different;
  }
  return a;
}

}  // namespace scalelab
