// data/split: a deterministic, stable train/valid/test split of G2P entries by distinct word.
//
// A word's side depends only on the word and the seed: a 64-bit FNV-1a hash of its bytes, mixed
// with the seed by the SplitMix64 finaliser, mapped to [0, 1) and cut at the fractions. So adding,
// removing or reordering entries never moves a word, and all pronunciations of a word share a side
// (they live in one CmudictEntry). std::hash is avoided: it differs between standard libraries.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "scalelab/data/cmudict.hpp"

namespace scalelab {

enum class SplitSide { train, valid, test };
const char* split_side_name(SplitSide side);

struct SplitOptions {
  uint64_t seed = 20170612;  // fixed, so every run of the project sees the same split
  double valid_fraction = 0.05;
  double test_fraction = 0.05;  // the rest is train
};

// Throws Error if the fractions are negative or sum to more than 1.
SplitSide side_of_word(const std::string& word, const SplitOptions& options = {});

struct G2pSplit {
  std::vector<CmudictEntry> train, valid, test;  // each keeps the input order
};
G2pSplit split_by_word(const std::vector<CmudictEntry>& entries, const SplitOptions& options = {});

}  // namespace scalelab
