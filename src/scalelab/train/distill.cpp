#include "scalelab/train/distill.hpp"

#include <algorithm>

#include "scalelab/core/error.hpp"

namespace scalelab {

Distilled distill_pronunciations(const std::vector<G2pMember>& teacher,
                                 const std::vector<CmudictEntry>& words, const Vocab& letters,
                                 const Vocab& phones, const G2pDecodeOptions& options,
                                 const DistillProgress& progress) {
  SL_CHECK(!words.empty(), "distill: no words to pronounce");
  // Chunks only pace the progress reports: each word is decoded alone in its batch either way.
  constexpr size_t kChunk = 4096;
  Distilled out;
  out.entries.reserve(words.size());
  for (size_t start = 0; start < words.size(); start += kChunk) {
    const size_t end = std::min(words.size(), start + kChunk);
    std::vector<std::string> chunk;
    for (size_t i = start; i < end; ++i) chunk.push_back(words[i].word);
    std::vector<Pronunciation> said = pronounce(teacher, chunk, letters, phones, options);
    for (size_t i = start; i < end; ++i) {
      Pronunciation& p = said[i - start];
      out.teacher_rates.add(score_word(p, words[i].pronunciations));
      if (p.empty()) {
        ++out.kept_dictionary;
        out.entries.push_back(words[i]);
      } else {
        out.entries.push_back({words[i].word, {std::move(p)}});
      }
    }
    if (progress) progress(static_cast<int64_t>(end), static_cast<int64_t>(words.size()));
  }
  return out;
}

}  // namespace scalelab
