// report/claim_sections: the summary table of verdicts and one section per claim (statement,
// experiment, arms with their resolved configs, criterion, measurements, plots, verdict).
#pragma once
#include <map>
#include <string>
#include <vector>

#include "scalelab/report/document.hpp"
#include "scalelab/report/ledger_files.hpp"

namespace scalelab::report {

// Figures per claim ID, in the order of the claim's `plots` array.
using ClaimFigures = std::map<std::string, std::vector<Figure>>;

std::vector<Block> summary_blocks(const Ledger& ledger);
std::vector<Block> claim_section(const ClaimRecord& claim, const std::vector<Figure>& figures);

}  // namespace scalelab::report
