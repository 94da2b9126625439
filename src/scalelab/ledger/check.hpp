// ledger/check: `scalelab check`: plan the selected claims, run their runs once each (from the
// cache when possible, `jobs` side by side), evaluate every criterion and write the ledger
// directory (docs/ledger.md).
#pragma once
#include <iosfwd>
#include <string>
#include <vector>

#include "scalelab/core/config_section.hpp"

namespace scalelab::ledger {

struct CheckOptions {
  bool quick = false;
  std::vector<std::string> only;       // claim IDs; empty: all
  std::string out = "scalelab-report";
  int64_t jobs = 0;                    // runs side by side; 0: the number of cores
  int64_t seeds = 0;                   // training seeds; 0: 3 (init-time claims: max(8, seeds))
  std::ostream* progress = nullptr;    // progress lines (null: silent)
};

struct CheckResult {
  Json ledger;          // the content of ledger.json
  int64_t runs = 0, cached_runs = 0;
  double seconds = 0;
};

// Throws Error (before any work or any write) for an unknown claim ID, a bad option or an output
// directory that holds something other than a ledger.
CheckResult run_check(const CheckOptions& options);

// Every claim as Markdown (ID, statement, experiment, criterion, the file that implements it): the
// per-claim sections of docs/ledger.md are this output.
std::string claims_markdown();

// Splits "E3,A4, b1" into normalised IDs; throws Error naming an unknown ID and the allowed ones.
std::vector<std::string> parse_claim_ids(const std::string& list);

}  // namespace scalelab::ledger
