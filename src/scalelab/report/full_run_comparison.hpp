// report/full_run_comparison: a quick-mode report names the claims whose verdict differs from the
// last full run's (the published docs/report/ by default, or `--compare-with DIR`).
//
// Quick mode trains small models on a synthetic task, so its verdicts are provisional; a reader
// of a quick report wants to know at once which of them the full ledger (G2P, larger grids)
// decided otherwise. Only the full run's ledger.json is read (its summary entries and metadata),
// plus the "Published <date> from commit <hash>" line of its PUBLISHED.md when it is a published
// copy, for the date and commit that ledger.json does not hold.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "scalelab/report/document.hpp"
#include "scalelab/report/ledger_files.hpp"

namespace scalelab::report {

// What a report compares its ledger with (the value of --compare-with).
struct CompareWith {
  enum Kind {
    none,       // no comparison
    published,  // the repository's published full ledger, when it exists (quick ledgers only)
    directory,  // the full-mode ledger in `dir`; an error if it is not one
  };
  Kind kind = none;
  std::string dir;
};

// "none" -> none; anything else names a directory. Throws Error on "".
CompareWith parse_compare_with(const std::string& value);

// The published full ledger of the source tree this binary was built from (docs/report/),
// compiled in as an absolute path.
std::string published_report_dir();

struct FullRun {
  std::string dir;
  std::string date, commit;  // from PUBLISHED.md; empty when DIR has none
  std::string cpu, version;  // from ledger.json; may be empty
  std::vector<LedgerEntry> entries;
};

// Reads DIR/ledger.json (and DIR/PUBLISHED.md if present). Throws Error, naming DIR and the
// problem, when DIR has no ledger.json, it is not valid JSON or breaks schema 1, or its mode is
// not "full".
FullRun read_full_run(const std::string& dir);

// The full run a ledger of `ledger_mode` is compared with, read now (so a bad DIR is an error
// before anything is written): nullopt for kind none, for a ledger that is not in quick mode, and
// for kind published when the published directory holds no ledger.json. Kind directory is read and
// checked whatever the mode.
std::optional<FullRun> full_run_to_compare(const CompareWith& with, const std::string& ledger_mode);

// The opening's section "Compared with the full run": each claim of `quick` whose verdict differs
// from the full run's (ID, quick verdict, full verdict), or one line saying they all agree; the
// full run's date, commit and CPU.
std::vector<Block> comparison_blocks(const Ledger& quick, const FullRun& full);

}  // namespace scalelab::report
