// data/predictions: a G2P model's answers, word by word, as a file a person can read and a tool
// can compare (`scalelab eval --predictions`, `scalelab agree`).
//
// The file is tab-separated text, one line per scored word in the order scored, after '#'
// comment lines (what was scored, by which checkpoints, with which search):
//     word <TAB> hypothesis <TAB> right|wrong <TAB> edits <TAB> references
// hypothesis: the model's phones separated by spaces (empty if it emitted <eos> first);
// references: the dictionary's pronunciations, each phones separated by spaces, joined by " | ".
// right|wrong and edits are the scoring of data/edit_distance.hpp (right: the hypothesis equals
// one of the references; edits: the edit distance to the closest one). They are written for the
// reader and recomputed when the file is read: a line whose columns disagree is an Error, so a
// hand-edited or truncated file cannot pass for a model's answers.
//
// Agreement of two models on the same words (why an ensemble helps, or does not):
//     both right | only the first right | only the second right | both wrong (same or different
//     outputs); oracle WER = share of words that neither gets right: the floor for any way of
//     choosing between the two answers (an ensemble that searches anew may find a third).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "scalelab/data/cmudict.hpp"
#include "scalelab/data/edit_distance.hpp"

namespace scalelab {

struct WordPrediction {
  std::string word;
  Pronunciation hypothesis;                 // may be empty
  std::vector<Pronunciation> references;   // at least one
  WordScore score;                          // hypothesis against references
};

// One row per entry, entries[i] with hypotheses[i]; Error if the counts differ.
std::vector<WordPrediction> score_predictions(const std::vector<CmudictEntry>& entries,
                                              const std::vector<Pronunciation>& hypotheses);

// The file text: `comment` lines prefixed with "# ", then one line per row.
std::string format_predictions(const std::vector<WordPrediction>& rows,
                               const std::vector<std::string>& comment = {});

// Parses the text (source names the file in errors). Error, naming the source and line, for a
// line without exactly five tab-separated columns, an empty word or reference, a right|wrong or
// edits column that disagrees with the hypothesis and references, or a text without any row.
std::vector<WordPrediction> parse_predictions(const std::string& text, const std::string& source);
// Reads and parses a file; Error if it is missing, a directory or unreadable.
std::vector<WordPrediction> read_predictions(const std::string& path);

struct Agreement {
  int64_t words = 0;
  int64_t same_output = 0;            // identical hypotheses (right or wrong)
  int64_t both_right = 0;
  int64_t only_first_right = 0;
  int64_t only_second_right = 0;
  int64_t both_wrong_same = 0;        // the same wrong hypothesis
  int64_t both_wrong_different = 0;

  double first_wer() const;   // (only_second_right + both wrong) / words
  double second_wer() const;  // (only_first_right + both wrong) / words
  double oracle_wer() const;  // both wrong / words
};

// Error unless both hold the same words with the same references, in the same order (the first
// difference is named): they must come from one split, scored with --every/--limit alike.
Agreement compare_predictions(const std::vector<WordPrediction>& first,
                              const std::vector<WordPrediction>& second);

}  // namespace scalelab
