#include "scalelab/data/edit_distance.hpp"

namespace scalelab {

void ErrorRates::add(const WordScore& score) {
  ++words;
  if (!score.correct) ++wrong_words;
  edits += score.distance;
  reference_tokens += score.reference_length;
}

double ErrorRates::wer() const {
  SL_CHECK(words > 0, "WER is undefined over 0 words");
  return static_cast<double>(wrong_words) / static_cast<double>(words);
}

double ErrorRates::per() const {
  SL_CHECK(reference_tokens > 0, "PER is undefined over 0 reference tokens (", words, " words)");
  return static_cast<double>(edits) / static_cast<double>(reference_tokens);
}

}  // namespace scalelab
