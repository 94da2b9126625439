// ledger/builtin_claim_files: the built-in claims written as claim files
// (src/scalelab/ledger/claims/*.toml), compiled into the binary as text by the build
// (cmake/embed_claim_files.cmake writes the definition), so no file is looked up at run time.
#pragma once
#include <string>
#include <vector>

namespace scalelab::ledger {

struct BuiltinClaimFile {
  std::string name;  // the file's name, e.g. "A8.toml"
  std::string text;  // its TOML
};

// Every file of src/scalelab/ledger/claims/, in name order.
const std::vector<BuiltinClaimFile>& builtin_claim_files();

}  // namespace scalelab::ledger
