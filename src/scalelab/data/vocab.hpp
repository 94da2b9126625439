// data/vocab: a token <-> id table with the four special tokens first (see example.hpp).
#pragma once
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "scalelab/data/example.hpp"

namespace scalelab {

class Vocab {
 public:
  Vocab();  // holds only the special tokens
  explicit Vocab(const std::vector<std::string>& tokens);  // specials first, then these in order

  int32_t add(const std::string& token);  // returns the existing id if present
  int32_t id(const std::string& token) const;  // kUnkId when absent
  bool contains(const std::string& token) const;
  const std::string& token(int32_t id) const;  // throws Error for an id out of range
  int32_t size() const { return static_cast<int32_t>(tokens_.size()); }
  const std::vector<std::string>& tokens() const { return tokens_; }

 private:
  std::vector<std::string> tokens_;
  std::unordered_map<std::string, int32_t> ids_;
};

}  // namespace scalelab
