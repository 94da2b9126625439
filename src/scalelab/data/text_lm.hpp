// data/text_lm: character-level language-model helpers (one token per byte of text).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "scalelab/data/vocab.hpp"

namespace scalelab {

// The distinct bytes of all texts, sorted by byte value, after the special tokens; the same texts
// always give the same ids.
Vocab build_char_vocab(const std::vector<std::string_view>& texts);

// One id per byte; a byte not in the vocabulary becomes kUnkId.
std::vector<int32_t> encode_chars(std::string_view text, const Vocab& vocab);
std::string decode_chars(const std::vector<int32_t>& ids, const Vocab& vocab);

}  // namespace scalelab
