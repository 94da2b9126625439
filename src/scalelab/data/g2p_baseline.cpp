#include "scalelab/data/g2p_baseline.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>

#include "scalelab/core/error.hpp"

namespace scalelab {
namespace {

constexpr int kMaxChunk = 2;            // phones per letter
constexpr double kSmoothing = 0.1;      // added to every chunk count
constexpr double kPossibleChunks = 1600;  // ~ 1 + 39 + 39^2: the smoothing's denominator
constexpr char kPad = '_';              // marks positions before/after the word in a context

using ChunkKey = std::string;  // phones joined by ' ', "" for no phone

ChunkKey chunk_key(const Pronunciation& phones, size_t begin, size_t end) {
  ChunkKey key;
  for (size_t j = begin; j < end; ++j) key += (j > begin ? " " : "") + phones[j];
  return key;
}

Pronunciation chunk_phones(const ChunkKey& key) {
  Pronunciation phones;
  size_t start = 0;
  while (start < key.size()) {
    size_t end = key.find(' ', start);
    if (end == std::string::npos) end = key.size();
    phones.push_back(key.substr(start, end - start));
    start = end + 1;
  }
  return phones;
}

// Fractional counts of chunks per letter; log_prob is smoothed so unseen chunks stay possible.
class ChunkModel {
 public:
  void add(char letter, const ChunkKey& chunk, double weight) {
    counts_[letter][chunk] += weight;
    totals_[letter] += weight;
  }
  double log_prob(char letter, const ChunkKey& chunk) const {
    double count = 0, total = 0;
    if (auto it = counts_.find(letter); it != counts_.end()) {
      total = totals_.at(letter);
      if (auto c = it->second.find(chunk); c != it->second.end()) count = c->second;
    }
    return std::log((count + kSmoothing) / (total + kSmoothing * kPossibleChunks));
  }

 private:
  std::unordered_map<char, std::unordered_map<ChunkKey, double>> counts_;
  std::unordered_map<char, double> totals_;
};

// The starting model: every phone of a pronunciation counts towards every letter of its word,
// so a letter's frequent companions (c -> K, s -> S) get most of the probability.
ChunkModel co_occurrence_model(const std::vector<CmudictEntry>& entries) {
  ChunkModel model;
  for (const auto& entry : entries)
    for (const auto& phones : entry.pronunciations)
      for (char letter : entry.word)
        for (const auto& phone : phones) model.add(letter, phone, 1.0 / phones.size());
  return model;
}

// Viterbi alignment: chunk boundaries per letter (chunk i = phones[bounds[i], bounds[i+1])), or
// empty if the pronunciation needs more than kMaxChunk phones for some letter.
std::vector<size_t> align(const std::string& word, const Pronunciation& phones,
                          const ChunkModel& model) {
  const size_t n = word.size(), m = phones.size();
  if (m > kMaxChunk * n) return {};
  const double impossible = -std::numeric_limits<double>::infinity();
  // best[i][j]: best log-probability of letters [0, i) producing phones [0, j).
  std::vector<std::vector<double>> best(n + 1, std::vector<double>(m + 1, impossible));
  std::vector<std::vector<int>> chunk_length(n + 1, std::vector<int>(m + 1, -1));
  best[0][0] = 0;
  for (size_t i = 1; i <= n; ++i)
    for (size_t j = 0; j <= m; ++j)
      for (int k = 0; k <= kMaxChunk && static_cast<size_t>(k) <= j; ++k) {
        if (best[i - 1][j - k] == impossible) continue;
        const double score =
            best[i - 1][j - k] + model.log_prob(word[i - 1], chunk_key(phones, j - k, j));
        if (score > best[i][j]) {  // strict: on a tie the shorter chunk wins, deterministically
          best[i][j] = score;
          chunk_length[i][j] = k;
        }
      }
  if (best[n][m] == impossible) return {};
  std::vector<size_t> bounds(n + 1);
  size_t j = m;
  for (size_t i = n; i > 0; --i) {
    bounds[i] = j;
    j -= chunk_length[i][j];
  }
  bounds[0] = 0;
  return bounds;
}

std::string context_string(const std::string& padded, size_t center, int left, int right) {
  return std::to_string(left) + ":" + padded.substr(center - left, left + 1 + right);
}

}  // namespace

G2pBaseline G2pBaseline::train(const std::vector<CmudictEntry>& entries,
                               const G2pBaselineOptions& options) {
  SL_CHECK(options.em_iterations >= 1 && options.context >= 0,
           "G2P baseline needs em_iterations >= 1 and context >= 0 (got em_iterations = ",
           options.em_iterations, ", context = ", options.context, ")");
  SL_CHECK(!entries.empty(), "G2P baseline needs at least one training entry");

  ChunkModel model = co_occurrence_model(entries);
  for (int iteration = 0; iteration < options.em_iterations; ++iteration) {
    ChunkModel next;
    for (const auto& entry : entries)
      for (const auto& phones : entry.pronunciations) {
        const auto bounds = align(entry.word, phones, model);
        for (size_t i = 0; !bounds.empty() && i < entry.word.size(); ++i)
          next.add(entry.word[i], chunk_key(phones, bounds[i], bounds[i + 1]), 1.0);
      }
    model = std::move(next);
  }

  G2pBaseline baseline;
  baseline.context_ = options.context;
  // Widest context first; within a width, the most balanced first, then the more left.
  for (int width = 2 * options.context; width >= 0; --width) {
    std::vector<Context> level;
    for (int left = std::min(width, options.context); left >= 0; --left)
      if (width - left <= options.context) level.push_back({left, width - left});
    std::stable_sort(level.begin(), level.end(), [](Context a, Context b) {
      return std::abs(a.left - a.right) < std::abs(b.left - b.right);
    });
    baseline.backoff_.insert(baseline.backoff_.end(), level.begin(), level.end());
  }

  // Counts per level; std::map keeps chunks ordered so ties resolve to the smallest key.
  std::vector<std::unordered_map<std::string, std::map<ChunkKey, int64_t>>> counts(
      baseline.backoff_.size());
  const std::string pad(options.context, kPad);
  for (const auto& entry : entries)
    for (const auto& phones : entry.pronunciations) {
      const auto bounds = align(entry.word, phones, model);
      if (bounds.empty()) {
        ++baseline.unaligned_;
        continue;
      }
      const std::string padded = pad + entry.word + pad;
      for (size_t i = 0; i < entry.word.size(); ++i) {
        const ChunkKey chunk = chunk_key(phones, bounds[i], bounds[i + 1]);
        for (size_t level = 0; level < counts.size(); ++level) {
          const auto [left, right] = baseline.backoff_[level];
          ++counts[level][context_string(padded, i + options.context, left, right)][chunk];
        }
      }
    }

  baseline.best_chunk_.resize(counts.size());
  for (size_t level = 0; level < counts.size(); ++level)
    for (const auto& [context, chunk_counts] : counts[level]) {
      auto best = chunk_counts.begin();
      for (auto it = chunk_counts.begin(); it != chunk_counts.end(); ++it)
        if (it->second > best->second) best = it;
      baseline.best_chunk_[level][context] = chunk_phones(best->first);
    }
  return baseline;
}

Pronunciation G2pBaseline::predict(const std::string& word) const {
  const std::string pad(context_, kPad);
  const std::string padded = pad + word + pad;
  Pronunciation phones;
  for (size_t i = 0; i < word.size(); ++i)
    for (size_t level = 0; level < backoff_.size(); ++level) {
      const auto [left, right] = backoff_[level];
      const auto& table = best_chunk_[level];
      auto it = table.find(context_string(padded, i + context_, left, right));
      if (it == table.end()) continue;
      phones.insert(phones.end(), it->second.begin(), it->second.end());
      break;  // a letter never seen in training contributes no phone
    }
  return phones;
}

ErrorRates evaluate_g2p_baseline(const G2pBaseline& model,
                                 const std::vector<CmudictEntry>& entries) {
  ErrorRates rates;
  for (const auto& entry : entries)
    rates.add(score_word(model.predict(entry.word), entry.pronunciations));
  return rates;
}

}  // namespace scalelab
