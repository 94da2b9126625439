#include "scalelab/data/vocab.hpp"

#include "scalelab/core/error.hpp"

namespace scalelab {

Vocab::Vocab() {
  for (const char* special : {"<pad>", "<bos>", "<eos>", "<unk>"}) add(special);
}

Vocab::Vocab(const std::vector<std::string>& tokens) : Vocab() {
  for (const auto& t : tokens) add(t);
}

int32_t Vocab::add(const std::string& token) {
  auto it = ids_.find(token);
  if (it != ids_.end()) return it->second;
  const auto id = static_cast<int32_t>(tokens_.size());
  tokens_.push_back(token);
  ids_.emplace(token, id);
  return id;
}

int32_t Vocab::id(const std::string& token) const {
  auto it = ids_.find(token);
  return it == ids_.end() ? kUnkId : it->second;
}

bool Vocab::contains(const std::string& token) const { return ids_.count(token) != 0; }

const std::string& Vocab::token(int32_t id) const {
  SL_CHECK(id >= 0 && id < size(), "token id ", id, " is out of range [0, ", size(), ")");
  return tokens_[id];
}

}  // namespace scalelab
