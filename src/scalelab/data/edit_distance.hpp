// data/edit_distance: Levenshtein distance on token sequences, and the G2P error rates built on it.
//
// WER (word error rate) = share of words whose hypothesis equals none of the word's references.
// PER (phone error rate) = sum over words of the edit distance to the closest reference, divided by
// the sum of the lengths of those closest references (ties go to the first reference in order).
// Both count a word right if it matches ANY reference pronunciation, as is usual for CMUdict.
#pragma once
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

#include "scalelab/core/error.hpp"

namespace scalelab {

// Minimum number of insertions, deletions and substitutions turning a into b (unit costs).
template <class Token>
int64_t edit_distance(const std::vector<Token>& a, const std::vector<Token>& b) {
  // One row of the classic DP table: row[j] = distance(a[0..i), b[0..j)).
  std::vector<int64_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), int64_t{0});
  for (size_t i = 1; i <= a.size(); ++i) {
    int64_t diagonal = row[0];  // distance(a[0..i-1), b[0..j-1))
    row[0] = static_cast<int64_t>(i);
    for (size_t j = 1; j <= b.size(); ++j) {
      const int64_t above = row[j];
      const int64_t substitute = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
      row[j] = std::min({substitute, above + 1, row[j - 1] + 1});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// How one hypothesis fares against the references of one word.
struct WordScore {
  int64_t distance = 0;          // edit distance to the closest reference
  int64_t reference_length = 0;  // length of that closest reference
  bool correct = false;          // distance == 0
};

template <class Token>
WordScore score_word(const std::vector<Token>& hypothesis,
                     const std::vector<std::vector<Token>>& references) {
  SL_CHECK(!references.empty(), "score_word needs at least one reference (got 0)");
  WordScore best;
  for (size_t r = 0; r < references.size(); ++r) {
    const int64_t d = edit_distance(hypothesis, references[r]);
    if (r == 0 || d < best.distance) {
      best.distance = d;
      best.reference_length = static_cast<int64_t>(references[r].size());
    }
  }
  best.correct = best.distance == 0;
  return best;
}

// Accumulates WordScores over a test set.
struct ErrorRates {
  int64_t words = 0;
  int64_t wrong_words = 0;
  int64_t edits = 0;
  int64_t reference_tokens = 0;

  void add(const WordScore& score);
  double wer() const;  // in [0, 1]; throws Error when no word was added
  double per() const;  // may exceed 1 for very long hypotheses; throws Error on 0 reference tokens
};

}  // namespace scalelab
