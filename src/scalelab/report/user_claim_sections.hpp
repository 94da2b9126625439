// report/user_claim_sections: the "Your claims" section, for the claims a user wrote in claim
// files (scalelab check --claims FILE; docs/claims-file.md). A table of their verdicts, then per
// claim its statement, experiment, criterion, verdict, the plots of the measured quantity against
// the sweep per arm, and the measurements per arm and sweep value. The records are the same schema
// as the built-in claims'; a user claim is one whose group is "user (<file name>)".
#pragma once
#include <vector>

#include "scalelab/report/claim_sections.hpp"
#include "scalelab/report/document.hpp"
#include "scalelab/report/ledger_files.hpp"

namespace scalelab::report {

bool is_user_claim(const ClaimRecord& claim);

// The section's blocks (nothing when no claim is a user's).
std::vector<Block> user_claim_blocks(const std::vector<const ClaimRecord*>& claims, const ClaimFigures& figures);

}  // namespace scalelab::report
