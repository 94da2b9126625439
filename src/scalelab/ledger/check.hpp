// ledger/check: `scalelab check`: plan the selected claims, run their runs once each (from the
// cache when possible, `jobs` side by side), evaluate every criterion and write the ledger
// directory (docs/ledger.md).
//
// Under MPI (CheckOptions::comm with more than one rank, docs/scaling.md) the runs are a work queue:
// every rank plans the same runs, rank 0 looks up its cache, deals the missing runs' indices to the
// ranks that ask for work (and runs some itself on a second thread), receives each result as JSON,
// caches it and alone evaluates and writes the ledger. Runs are deterministic and single-threaded,
// so the verdicts are those of one process.
#pragma once
#include <iosfwd>
#include <string>
#include <vector>

#include "scalelab/core/comm.hpp"
#include "scalelab/core/config_section.hpp"

namespace scalelab::ledger {

struct CheckOptions {
  bool quick = false;
  std::vector<std::string> only;       // claim IDs; empty: all
  std::vector<std::string> claim_files;  // user claim files (docs/claims-file.md), run with the built-ins
  std::string out = "scalelab-report";
  int64_t jobs = 0;                    // runs side by side; 0: the number of cores
  int64_t seeds = 0;                   // training seeds; 0: 3 (init-time claims: max(8, seeds))
  std::ostream* progress = nullptr;    // progress lines (null: silent; only rank 0 prints)
  bool progress_on_terminal = false;   // one updating line (a terminal) instead of a line per run
  Comm* comm = nullptr;                // the job's ranks (null: this process alone)
};

struct CheckResult {
  Json ledger;          // the content of ledger.json
  int64_t runs = 0, cached_runs = 0;
  double seconds = 0;
  bool written = true;  // false on ranks other than 0 (they only ran runs; ledger is empty)
};

// Throws Error (before any work or any write) for an unknown claim ID, a bad option or an output
// directory that holds something other than a ledger.
CheckResult run_check(const CheckOptions& options);

// Every claim as Markdown (ID, statement, experiment, criterion, the file that implements it): the
// per-claim sections of docs/ledger.md are this output.
std::string claims_markdown();

// Splits "E3,A4, b1" into normalised IDs; throws Error naming an unknown ID and the allowed ones.
// `user_ids` (claims from --claims files) are matched exactly, before the built-ins.
std::vector<std::string> parse_claim_ids(const std::string& list, const std::vector<std::string>& user_ids = {});

}  // namespace scalelab::ledger
