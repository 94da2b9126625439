// report/claim_catalogue: the ledger's 29 claim IDs in their canonical order, each with the
// claim as a clause, and the sentence that states a claim's verdict from its JSON record.
#pragma once
#include <string>
#include <vector>

#include "scalelab/report/document.hpp"
#include "scalelab/report/ledger_files.hpp"

namespace scalelab::report {

struct CatalogueEntry {
  const char* id;
  const char* gist;  // "unscaled N(0, 1) token embeddings swamp ...": fits after "The claim that"
};

// E1..E12, A1..A13, B1..B4 (the IDs of shared/claims.md).
const std::vector<CatalogueEntry>& claim_catalogue();

// The ledger's claims in canonical order; IDs the catalogue does not know come last, as listed.
std::vector<const ClaimRecord*> claims_in_order(const Ledger& ledger);

// "label: text" of a key number (text, or the value and unit when text is empty); "" if none.
std::string key_number_text(const KeyNumber& k);

// "#claim-E4"
std::string claim_anchor(const std::string& id);

// One sentence: "The claim that <gist> **holds only if** <condition> (<key number>)."
// Its wording follows the verdict in the record; a null record says the claim was not run.
Inline verdict_sentence(const std::string& id, const ClaimRecord* claim);

}  // namespace scalelab::report
