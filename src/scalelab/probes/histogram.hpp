// probes/histogram: counts over bins whose edges the caller fixes, or that sit at the quantiles
// of the values themselves.
//
// Bins: edges e_0 < e_1 < ... < e_B give B bins [e_i, e_i+1), the last one closed [e_B-1, e_B].
// Values below e_0 count in `below`, above e_B in `above`, NaN in `nan`; nothing is dropped, so
// total() is the number of values added. Two histograms with the same edges merge by adding.
#pragma once
#include <cstdint>
#include <vector>

#include "scalelab/core/config_section.hpp"  // Json

namespace scalelab::probes {

class Histogram {
 public:
  Histogram() = default;
  // edges: at least 2, finite, strictly increasing; throws Error otherwise.
  explicit Histogram(std::vector<double> edges);
  // `bins` equal bins over [lo, hi].
  static Histogram uniform(double lo, double hi, int64_t bins);

  void add(double x, int64_t weight = 1);
  template <class T>
  void add_values(const T* x, int64_t n) {
    for (int64_t i = 0; i < n; ++i) add(static_cast<double>(x[i]));
  }
  void merge(const Histogram& other);  // same edges, or throws

  const std::vector<double>& edges() const { return edges_; }
  const std::vector<int64_t>& counts() const { return counts_; }
  int64_t bins() const { return static_cast<int64_t>(counts_.size()); }
  int64_t below() const { return below_; }
  int64_t above() const { return above_; }
  int64_t nan() const { return nan_; }
  int64_t total() const;
  bool empty() const { return edges_.empty(); }

  // {"edges": [...], "counts": [...], "below": n, "above": n, "nan": n}
  Json to_json() const;
  static Histogram from_json(const Json& j);

 private:
  std::vector<double> edges_;
  std::vector<int64_t> counts_;
  int64_t below_ = 0, above_ = 0, nan_ = 0;
};

// Quantiles of the values at probabilities in [0, 1] by linear interpolation between order
// statistics (Hyndman & Fan type 7, numpy's default). NaNs are ignored; throws Error if no value
// is left or a probability is outside [0, 1].
std::vector<double> quantiles(std::vector<double> values, const std::vector<double>& probs);

// Edges at the 0, 1/B, ..., 1 quantiles of the values (equal-count bins), with repeated edges
// (ties) removed; a constant sample gets the single bin [v, v + max(|v|, 1) * 1e-12].
std::vector<double> quantile_edges(const std::vector<double>& values, int64_t bins);

}  // namespace scalelab::probes
