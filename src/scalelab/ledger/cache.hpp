// ledger/cache: finished runs in DIR/cache/<key>.json, as {"key": key, "label", "result": {...}}.
// An entry is trusted only if it parses and its key matches its file name; otherwise it is
// reported and the run is done again.
#pragma once
#include <iosfwd>
#include <optional>
#include <string>

#include "scalelab/core/config_section.hpp"

namespace scalelab::ledger {

class RunCache {
 public:
  explicit RunCache(std::string dir) : dir_(std::move(dir)) {}
  // The cached result, or nullopt (missing or corrupt: `warnings` gets one line if corrupt).
  std::optional<Json> find(const std::string& key, std::ostream* warnings) const;
  void store(const std::string& key, const std::string& label, const Json& result) const;
  std::string path(const std::string& key) const;

 private:
  std::string dir_;
};

}  // namespace scalelab::ledger
