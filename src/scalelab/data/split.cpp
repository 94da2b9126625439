#include "scalelab/data/split.hpp"

#include "scalelab/core/error.hpp"

namespace scalelab {
namespace {

uint64_t fnv1a64(const std::string& text) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 0x100000001b3ull;
  }
  return hash;
}

// SplitMix64's finaliser: spreads every input bit over the output, so nearby hashes and seeds
// give unrelated positions.
uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

void check_fractions(const SplitOptions& options) {
  SL_CHECK(options.valid_fraction >= 0 && options.test_fraction >= 0 &&
               options.valid_fraction + options.test_fraction <= 1,
           "split fractions must be >= 0 and sum to <= 1 (valid_fraction = ",
           options.valid_fraction, ", test_fraction = ", options.test_fraction, ")");
}

}  // namespace

const char* split_side_name(SplitSide side) {
  switch (side) {
    case SplitSide::train: return "train";
    case SplitSide::valid: return "valid";
    case SplitSide::test: return "test";
  }
  return "?";
}

SplitSide side_of_word(const std::string& word, const SplitOptions& options) {
  check_fractions(options);
  const uint64_t h = mix64(fnv1a64(word) ^ mix64(options.seed + 0x9E3779B97F4A7C15ull));
  const double position = static_cast<double>(h >> 11) * 0x1.0p-53;  // uniform in [0, 1)
  if (position < options.test_fraction) return SplitSide::test;
  if (position < options.test_fraction + options.valid_fraction) return SplitSide::valid;
  return SplitSide::train;
}

G2pSplit split_by_word(const std::vector<CmudictEntry>& entries, const SplitOptions& options) {
  check_fractions(options);
  G2pSplit split;
  for (const auto& entry : entries) {
    switch (side_of_word(entry.word, options)) {
      case SplitSide::train: split.train.push_back(entry); break;
      case SplitSide::valid: split.valid.push_back(entry); break;
      case SplitSide::test: split.test.push_back(entry); break;
    }
  }
  return split;
}

}  // namespace scalelab
