// ledger/user_claims: a user's own claims from a TOML claim file (docs/claims-file.md), compiled
// into ordinary Claim objects that run through the same runner, cache, --jobs, MPI queue and
// report as the built-in ones.
//
// A claim file holds [[claim]] tables: a base config, named arms (overrides), an optional sweep (of
// one config key, or of a named quantity with overrides per value, some values only context), the
// seeds, a measure (user_measures.hpp) and a criterion between two arms (better / worse /
// equivalent / ratio_at_least / diverges, at every sweep value or at some). Each judged sweep value
// is a case decided by `vote` over the paired seeds (failed seeds as the worst value), and the
// verdict comes from from_cases, so a condition is always a sweep value (or an arm).
//
// Loading validates everything before any run: an unknown key, an unknown measure or criterion,
// an arm the criterion names that does not exist, a sweep key that is not a config key, an
// override the config rejects, a duplicate id or an id shaped like a built-in one (E/A/B + number)
// is an Error of one line naming the file, the claim, the key and what is allowed.
#pragma once
#include <string>
#include <vector>

#include "scalelab/ledger/claim.hpp"

namespace scalelab::ledger {

// Every claim of the files, in file order (ids unique across the files).
std::vector<Claim> load_claim_files(const std::vector<std::string>& paths, const LedgerMode& mode);

// The claims `scalelab check` runs: the built-ins and the files' claims, or those named in `only`
// (built-in ids as parse_claim_ids normalises them, user ids exactly).
std::vector<Claim> select_claims(const std::vector<std::string>& only,
                                 const std::vector<std::string>& claim_files, const LedgerMode& mode);

// The built-in claims written as claim files (src/scalelab/ledger/claims/<ID>.toml, compiled into
// the binary): ids of the built-in form, the group their letter names, the ledger's training config
// and seeds of the mode they are planned in. all_claims() holds them among the others.
std::vector<Claim> builtin_file_claims();

// True for an id of the built-in form: E, A or B followed by digits (any case).
bool builtin_shaped_id(const std::string& id);

}  // namespace scalelab::ledger
