// data/g2p_baseline: a deliberately simple G2P model, the floor any learned model must beat.
//
// Training: each letter is aligned to a chunk of 0, 1 or 2 phones by hard EM (Viterbi): start
// from letter/phone co-occurrence counts, align every pronunciation by dynamic programming under
// the current chunk probabilities, re-count, repeat. Prediction: for each letter, the most frequent
// chunk seen with the widest letter context (up to `context` letters each side) that occurred in
// training, backing off to narrower contexts and finally to the letter alone. Ties go to the
// smaller chunk in lexicographic order, so training and prediction are deterministic.
#pragma once
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "scalelab/data/cmudict.hpp"
#include "scalelab/data/edit_distance.hpp"

namespace scalelab {

struct G2pBaselineOptions {
  int em_iterations = 5;
  int context = 3;  // letters on each side in the widest context (3 beats 1 and 2 on CMUdict)
};

class G2pBaseline {
 public:
  static G2pBaseline train(const std::vector<CmudictEntry>& entries,
                           const G2pBaselineOptions& options = {});
  Pronunciation predict(const std::string& word) const;
  // Pronunciations left out of training because no 0-2 phones per letter alignment exists
  // (e.g. an abbreviation "w" -> D AH B AH L Y UW).
  int64_t unaligned_pronunciations() const { return unaligned_; }

 private:
  struct Context {
    int left, right;
  };
  std::vector<Context> backoff_;  // widest first, ending with {0, 0}
  // One table per back-off level: context string -> most frequent chunk.
  std::vector<std::unordered_map<std::string, Pronunciation>> best_chunk_;
  int context_ = 2;
  int64_t unaligned_ = 0;
};

// Predicts every word of `entries` and scores it against all of its pronunciations.
ErrorRates evaluate_g2p_baseline(const G2pBaseline& model, const std::vector<CmudictEntry>& entries);

}  // namespace scalelab
