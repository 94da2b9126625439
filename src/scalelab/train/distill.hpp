// train/distill: a teacher's pronunciations of the training words, the targets of a student
// trained by sequence-level knowledge distillation (Kim & Rush 2016; data/teacher_targets.hpp).
//
// The teacher (one model or an L2R/R2L ensemble, g2p_eval.hpp) decodes every word with the given
// search; its best output becomes the word's one pronunciation. A word the teacher pronounces
// as nothing (it emitted <eos> first) keeps the dictionary's pronunciations, so the student never
// learns an empty target; they are counted. The teacher's errors against the dictionary are
// scored on the way (ErrorRates): the student's targets differ from the dictionary on those words.
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "scalelab/data/cmudict.hpp"
#include "scalelab/data/edit_distance.hpp"
#include "scalelab/train/g2p_eval.hpp"

namespace scalelab {

struct Distilled {
  std::vector<CmudictEntry> entries;  // one per word, in the words' order
  ErrorRates teacher_rates;           // the teacher against the dictionary's pronunciations
  int64_t kept_dictionary = 0;        // words pronounced as nothing: the dictionary's kept
};

// Called after each chunk of words with the words done so far and the total.
using DistillProgress = std::function<void(int64_t done, int64_t total)>;

Distilled distill_pronunciations(const std::vector<G2pMember>& teacher,
                                 const std::vector<CmudictEntry>& words, const Vocab& letters,
                                 const Vocab& phones, const G2pDecodeOptions& options,
                                 const DistillProgress& progress = {});

}  // namespace scalelab
