#include "scalelab/data/text_lm.hpp"

#include <array>

namespace scalelab {

Vocab build_char_vocab(const std::vector<std::string_view>& texts) {
  std::array<bool, 256> seen{};
  for (auto text : texts)
    for (unsigned char c : text) seen[c] = true;
  std::vector<std::string> symbols;
  for (int byte = 0; byte < 256; ++byte)
    if (seen[byte]) symbols.emplace_back(1, static_cast<char>(byte));
  return Vocab(symbols);
}

std::vector<int32_t> encode_chars(std::string_view text, const Vocab& vocab) {
  // A byte-indexed table: the text is millions of characters, a hash lookup each would dominate.
  std::array<int32_t, 256> id_of_byte;
  for (int byte = 0; byte < 256; ++byte)
    id_of_byte[byte] = vocab.id(std::string(1, static_cast<char>(byte)));
  std::vector<int32_t> ids;
  ids.reserve(text.size());
  for (unsigned char c : text) ids.push_back(id_of_byte[c]);
  return ids;
}

std::string decode_chars(const std::vector<int32_t>& ids, const Vocab& vocab) {
  std::string text;
  text.reserve(ids.size());
  for (int32_t id : ids) text += vocab.token(id);
  return text;
}

}  // namespace scalelab
