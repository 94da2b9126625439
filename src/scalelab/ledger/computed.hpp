// ledger/computed: what a claim computes inline during its evaluation (Monte Carlo, exact
// evaluations, kernels on synthetic data, the model at init read directly) and its cache.
//
// A claim reads an inline computation only as ComputedValues: named series of numbers in their
// serialised form, whether computed just now or read back from DIR/cache/computed-<key>.json, so a
// fresh and a cached evaluation give byte-identical records (docs/ledger.md, rule 4). Non-finite
// numbers are stored as the strings "inf", "-inf" and "nan" and read back as those values.
//
// The key is a digest of the claim's ID and the computation's name, its inputs (parameters, seeds,
// mode), binary_version() (the engine digest, the build, the libraries, the CPU) and a digest of
// the binary the ledger is linked into: the computing code lives in the ledger's own sources,
// which the engine digest does not cover, so any rebuild that changes code computes them again.
// An entry is trusted by the run cache's rules (cache.hpp), and only if it holds every series the
// claim reads; otherwise one line on stderr names it and it is computed again (and rewritten).
#pragma once
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "scalelab/core/config_section.hpp"

namespace scalelab::ledger {

class ComputedValues {
 public:
  void set(const std::string& name, std::vector<double> values) { series_[name] = std::move(values); }
  // The series `name`; throws Error naming it when absent.
  const std::vector<double>& at(const std::string& name) const;
  bool has(const std::string& name) const { return series_.count(name) > 0; }

  Json to_json() const;
  // The values of `j`, or the problem that makes it unreadable (then `out` is untouched).
  static std::optional<std::string> from_json(const Json& j, ComputedValues& out);

 private:
  std::map<std::string, std::vector<double>> series_;
};

class ComputedCache {
 public:
  // `dir`: the out dir's cache/ ("": kept in memory only, for evaluations outside `check`);
  // `warnings`: where a refused entry is named (null: silent).
  explicit ComputedCache(std::string dir = "", std::ostream* warnings = nullptr)
      : dir_(std::move(dir)), warnings_(warnings) {}

  // The values of computation `name` of claim `claim` with `inputs`: from this process's memory,
  // the cache, or `compute` (then stored), always as read back from their JSON. `required`: the
  // series the claim reads; an entry without one of them is not trusted.
  ComputedValues get(const std::string& claim, const std::string& name, const Json& inputs,
                     const std::vector<std::string>& required, const std::function<ComputedValues()>& compute);

  std::string key(const std::string& claim, const std::string& name, const Json& inputs) const;
  std::string path(const std::string& key) const;  // "" when in memory only
  int64_t computed() const { return computed_; }
  int64_t from_cache() const { return from_cache_; }

 private:
  std::string dir_;
  std::ostream* warnings_;
  std::map<std::string, ComputedValues> memory_;
  int64_t computed_ = 0, from_cache_ = 0;
};

// A digest of the file holding the code that is running (the executable, or the shared object
// the ledger is linked into); computed once per process.
const std::string& running_code_digest();

}  // namespace scalelab::ledger
