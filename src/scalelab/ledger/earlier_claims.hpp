// ledger/earlier_claims: a `check --only` run into a directory that already holds claims keeps
// them listed. ledger.json lists every claim whose claims/<ID>.json is in the directory: this
// run's claims as it measured them, the others (checked by an earlier run and not re-checked now)
// as that run wrote them, named in ledger.json's "earlier_claims" and in one stderr line. A
// claims/<ID>.json that cannot be read is named in that line and left unlisted, never deleted.
#pragma once
#include <iosfwd>
#include <string>

#include "scalelab/core/config_section.hpp"

namespace scalelab::ledger {

// Adds the earlier claims of `out`/claims/ to `ledger` (its "claims" summaries, in the canonical
// claim order, and "earlier_claims": their IDs); the stderr line goes to `progress` (if any).
void keep_earlier_claims(const std::string& out, Json& ledger, std::ostream* progress);

}  // namespace scalelab::ledger
