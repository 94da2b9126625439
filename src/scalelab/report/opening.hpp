// report/opening: the report's first screen. The two questions of the source documents, each
// answered from the ledger's verdicts, then the follow-up questions, each linked to its claims.
#pragma once
#include <vector>

#include "scalelab/report/claim_sections.hpp"
#include "scalelab/report/document.hpp"
#include "scalelab/report/ledger_files.hpp"

namespace scalelab::report {

// Every number in these blocks comes from the claim records; the wording of each sentence is
// chosen by the claim's verdict, and a claim that was not run is said to be so.
// `figures` holds each question's figures under "?" and its anchor (question_figures.hpp).
std::vector<Block> opening_blocks(const Ledger& ledger, const ClaimFigures& figures = {});

}  // namespace scalelab::report
