// ledger/claim_groups: the claims of each group, defined in their own files (one per seed group).
#pragma once
#include <vector>

#include "scalelab/ledger/claim.hpp"

namespace scalelab::ledger {

std::vector<Claim> embedding_init_claims();      // E1–E6   (claims_embedding_init.cpp)
std::vector<Claim> embedding_training_claims();  // E7–E12  (claims_embedding_training.cpp)
std::vector<Claim> attention_init_claims();      // A1, A2, A5, A9, A10, A13 (claims_attention_init.cpp)
std::vector<Claim> attention_training_claims();  // A3, A4, A6, A7, A11, A12 (claims_attention_training.cpp)
std::vector<Claim> beyond_claims();              // B1–B4   (claims_beyond.cpp)
// A8 is a claim file (claims/A8.toml): builtin_file_claims() in user_claims.hpp.

}  // namespace scalelab::ledger
