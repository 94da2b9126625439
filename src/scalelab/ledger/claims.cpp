#include <algorithm>
#include <string>

#include "scalelab/ledger/claim_groups.hpp"
#include "scalelab/ledger/user_claims.hpp"

namespace scalelab::ledger {

const std::vector<Claim>& all_claims() {
  static const std::vector<Claim> claims = [] {
    std::vector<Claim> all;
    for (auto group : {embedding_init_claims, embedding_training_claims, attention_init_claims,
                       attention_training_claims, beyond_claims, builtin_file_claims})
      for (Claim& c : group()) all.push_back(std::move(c));
    // Stable order: E1..E12, A1..A13, B1..B4.
    auto rank = [](const std::string& id) {
      const int group = id[0] == 'E' ? 0 : id[0] == 'A' ? 1 : 2;
      return group * 100 + std::stoi(id.substr(1));
    };
    std::sort(all.begin(), all.end(), [&](const Claim& a, const Claim& b) { return rank(a.info.id) < rank(b.info.id); });
    return all;
  }();
  return claims;
}

}  // namespace scalelab::ledger
