// train/g2p_eval: pronounce words with a trained G2P model, and score it on held-out words.
//
// Every word is decoded once (greedy when beam = 1, else beam search with the GNMT length
// penalty) and scored against ALL of its pronunciations with the data layer's ErrorRates:
// WER = share of words matching none of them, PER = edit distance to the closest one over its
// length (docs/data.md). Words are decoded in batches in the given order, so results do not
// depend on the batch size.
//
// A model trained with data.phone_order = "right_to_left" emits a pronunciation last phone first;
// its output is reversed before it is returned or scored. Ensembles:
//   - members of one order: the mean of their distributions at every step (beam.hpp);
//   - L2R and R2L members together (their steps do not align, so they cannot be mixed per step):
//     each order's members search as an ensemble of that order and propose their n-best lists
//     (every finished hypothesis of a beam of `beam`); the union of the proposals, read left to
//     right, is scored by EVERY member in its own order (rescore.hpp), and the answer maximises
//         S(y) = (1/M) sum_m log p_m(y_m | x) / lp(|y| + 1)        (y_m: y in member m's order)
//     with the search's GNMT length penalty lp (alpha = length_penalty; <eos> counted). Equal
//     scores: the L2R proposals first, each list best first.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "scalelab/data/cmudict.hpp"
#include "scalelab/data/edit_distance.hpp"
#include "scalelab/model/transformer.hpp"
#include "scalelab/train/beam.hpp"

namespace scalelab {

struct G2pDecodeOptions {
  int64_t beam = 1;             // 1: greedy
  double length_penalty = 0.6;  // alpha (beam > 1 only)
  int64_t batch_size = 64;      // words decoded together
  int64_t max_extra_len = 10;   // output phones allowed beyond the word's letter count
  bool use_cache = true;        // the cached decoder step, in the search and in the rescoring
                                // (false: re-run the prefix / one full forward per proposal)
};

// The characters of `word` that the letter vocabulary does not hold (empty: all known).
std::string unknown_letters(const std::string& word, const Vocab& letters);
// The letters the vocabulary holds, for messages: "' - . a-z" (pocketsphinx), "' a-z" (g014b2b).
std::string known_letters(const Vocab& letters);

// Throws Error naming the word and the characters if a word holds a letter outside the vocab.
std::vector<Pronunciation> pronounce(Transformer<float>& model, const std::vector<std::string>& words,
                                     const Vocab& letters, const Vocab& phones,
                                     const G2pDecodeOptions& options);
// An ensemble (beam.hpp: the mean of the members' distributions at every step); greedy (beam 1)
// is beam search with one hypothesis.
std::vector<Pronunciation> pronounce(const Ensemble& models, const std::vector<std::string>& words,
                                     const Vocab& letters, const Vocab& phones,
                                     const G2pDecodeOptions& options);

// An ensemble member and the order it emits phones in (its checkpoint's data.phone_order).
struct G2pMember {
  Transformer<float>* model = nullptr;  // non-owning
  bool right_to_left = false;
};
// Throws Error unless there is a member, each an encoder-decoder, all with the same vocabularies.
void check_members(const std::vector<G2pMember>& members);
// Decodes the sources (Example::src; one batch, up to the longest source + max_extra_len output
// ids) with the members as described above; the outputs in order, left to right, without
// <bos>/<eos>. options.batch_size is the rescoring's batch size only.
std::vector<std::vector<int32_t>> decode_members(const std::vector<G2pMember>& members,
                                                 const std::vector<Example>& sources,
                                                 const G2pDecodeOptions& options);
std::vector<Pronunciation> pronounce(const std::vector<G2pMember>& members,
                                     const std::vector<std::string>& words, const Vocab& letters,
                                     const Vocab& phones, const G2pDecodeOptions& options);

struct G2pScore {
  ErrorRates rates;
  std::vector<Pronunciation> hypotheses;  // one per entry, in order
};

G2pScore evaluate_g2p(Transformer<float>& model, const std::vector<CmudictEntry>& entries,
                      const Vocab& letters, const Vocab& phones, const G2pDecodeOptions& options);
G2pScore evaluate_g2p(const Ensemble& models, const std::vector<CmudictEntry>& entries,
                      const Vocab& letters, const Vocab& phones, const G2pDecodeOptions& options);
G2pScore evaluate_g2p(const std::vector<G2pMember>& members, const std::vector<CmudictEntry>& entries,
                      const Vocab& letters, const Vocab& phones, const G2pDecodeOptions& options);

}  // namespace scalelab
