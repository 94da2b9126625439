// ledger/cache: finished runs in DIR/cache/<key>.json, as {"key": key, "label", "result": {...}}.
// An entry is trusted only if it is a regular file, parses, its key matches its file name and its
// result matches the schema of its kind of run (run_result_schema.hpp); otherwise one line on
// stderr names the file and what is wrong, and the run is done again (its entry rewritten).
#pragma once
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>

#include "scalelab/core/config_section.hpp"
#include "scalelab/ledger/runs.hpp"

namespace scalelab::ledger {

// The rules every cache entry of `check` is read by (runs here, inline computations in
// computed.hpp): the entry's "result" when it is to be trusted, nullopt otherwise. Trusted: a
// regular file that parses as a JSON object whose "key" is `key` and whose "result" `problem_of`
// accepts (it returns the problem, or nullopt). A missing file is silent; any other refusal writes
// one line to `warnings` naming the file and the problem, ending "; <redo>".
std::optional<Json> find_cache_entry(const std::string& path, const std::string& key,
                                     const std::function<std::optional<std::string>(const Json&)>& problem_of,
                                     const std::string& redo, std::ostream* warnings);
// Writes {"key", "label", "result"} to `path` atomically.
void store_cache_entry(const std::string& path, const std::string& key, const std::string& label, const Json& result);

class RunCache {
 public:
  explicit RunCache(std::string dir) : dir_(std::move(dir)) {}
  // The cached result of a run of `kind`, or nullopt (missing, or not to be trusted: then
  // `warnings` gets one line naming the file and the problem).
  std::optional<Json> find(const std::string& key, RunKind kind, std::ostream* warnings) const;
  void store(const std::string& key, const std::string& label, const Json& result) const;
  std::string path(const std::string& key) const;

 private:
  std::string dir_;
};

}  // namespace scalelab::ledger
