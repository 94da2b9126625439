// probes/summary: the spread of every probe value over seeds.
//
// Records that differ only in their seed form a group; for each value name of the group the summary
// keeps the per-seed values and their median, min and max (NaN values are left out; a group whose
// values are all NaN has median NaN and finite_seeds 0).
#pragma once
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "scalelab/probes/record.hpp"

namespace scalelab::probes {

struct SeedSpread {
  std::string probe, stack, site, field;
  int64_t layer = -1, head = -1, step = 0;
  std::vector<int64_t> seeds;    // in record order
  std::vector<double> values;    // one per seed (NaN kept here)
  int64_t finite_seeds = 0;
  double median = 0, min = 0, max = 0;
};

class SeedSummary {
 public:
  explicit SeedSummary(const std::vector<ProbeRecord>& records);

  // Null if there is no such group.
  const SeedSpread* find(const std::string& probe, const std::string& stack, int64_t layer,
                         const std::string& site, int64_t head, const std::string& field,
                         int64_t step = 0) const;
  const std::vector<SeedSpread>& all() const { return spreads_; }
  // The (stack, layer, site) triples seen for a probe, sorted (encoder before decoder).
  std::vector<std::tuple<std::string, int64_t, std::string>> sites(const std::string& probe) const;

  // {"schema":1,"groups":[{"probe":..,"stack":..,"layer":..,"site":..,"head":..,"step":..,
  //   "field":..,"seeds":[..],"values":[..],"median":..,"min":..,"max":..}, ...]}
  Json to_json() const;

 private:
  using Key = std::tuple<std::string, std::string, int64_t, std::string, int64_t, std::string,
                         int64_t>;  // probe, stack, layer, site, head, field, step
  std::vector<SeedSpread> spreads_;
  std::map<Key, size_t> index_;
};

// Median of the non-NaN values (NaN if none).
double median_of(std::vector<double> values);

}  // namespace scalelab::probes
