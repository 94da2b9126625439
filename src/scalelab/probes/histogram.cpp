#include "scalelab/probes/histogram.hpp"

#include <algorithm>
#include <cmath>

#include "scalelab/core/error.hpp"

namespace scalelab::probes {

Histogram::Histogram(std::vector<double> edges) : edges_(std::move(edges)) {
  SL_CHECK(edges_.size() >= 2, "histogram: need at least 2 bin edges, got ", edges_.size());
  for (size_t i = 0; i < edges_.size(); ++i) {
    SL_CHECK(std::isfinite(edges_[i]), "histogram: bin edge ", i, " = ", edges_[i],
             " is not finite");
    SL_CHECK(i == 0 || edges_[i] > edges_[i - 1], "histogram: bin edges must increase, but edge ",
             i, " = ", edges_[i], " <= edge ", i - 1, " = ", edges_[i - 1]);
  }
  counts_.assign(edges_.size() - 1, 0);
}

Histogram Histogram::uniform(double lo, double hi, int64_t bins) {
  SL_CHECK(bins >= 1, "histogram: bins = ", bins, " must be >= 1");
  SL_CHECK(std::isfinite(lo) && std::isfinite(hi) && hi > lo, "histogram: range [", lo, ", ", hi,
           "] must be finite with lo < hi");
  std::vector<double> e(bins + 1);
  for (int64_t i = 0; i <= bins; ++i)
    e[i] = i == bins ? hi : lo + (hi - lo) * static_cast<double>(i) / static_cast<double>(bins);
  return Histogram(std::move(e));
}

void Histogram::add(double x, int64_t weight) {
  SL_CHECK(!edges_.empty(), "histogram: add to a histogram without bins");
  if (std::isnan(x)) {
    nan_ += weight;
  } else if (x < edges_.front()) {
    below_ += weight;
  } else if (x > edges_.back()) {
    above_ += weight;
  } else {
    // First edge > x, minus one; x == last edge falls in the last (closed) bin.
    auto it = std::upper_bound(edges_.begin(), edges_.end(), x);
    int64_t bin = static_cast<int64_t>(it - edges_.begin()) - 1;
    bin = std::min<int64_t>(bin, bins() - 1);
    counts_[bin] += weight;
  }
}

void Histogram::merge(const Histogram& o) {
  if (o.edges_.empty()) return;
  if (edges_.empty()) {
    *this = o;
    return;
  }
  SL_CHECK(edges_ == o.edges_, "histogram: cannot merge histograms with different edges (", bins(),
           " vs ", o.bins(), " bins)");
  for (int64_t i = 0; i < bins(); ++i) counts_[i] += o.counts_[i];
  below_ += o.below_;
  above_ += o.above_;
  nan_ += o.nan_;
}

int64_t Histogram::total() const {
  int64_t n = below_ + above_ + nan_;
  for (int64_t c : counts_) n += c;
  return n;
}

Json Histogram::to_json() const {
  return Json{{"edges", edges_}, {"counts", counts_}, {"below", below_}, {"above", above_},
              {"nan", nan_}};
}

Histogram Histogram::from_json(const Json& j) {
  SL_CHECK(j.is_object() && j.contains("edges") && j.contains("counts"),
           "histogram: JSON needs \"edges\" and \"counts\": ", j.dump());
  Histogram h(j.at("edges").get<std::vector<double>>());
  const auto counts = j.at("counts").get<std::vector<int64_t>>();
  SL_CHECK(static_cast<int64_t>(counts.size()) == h.bins(), "histogram: ", counts.size(),
           " counts for ", h.bins(), " bins");
  h.counts_ = counts;
  h.below_ = j.value("below", int64_t{0});
  h.above_ = j.value("above", int64_t{0});
  h.nan_ = j.value("nan", int64_t{0});
  return h;
}

std::vector<double> quantiles(std::vector<double> values, const std::vector<double>& probs) {
  values.erase(std::remove_if(values.begin(), values.end(), [](double v) { return std::isnan(v); }),
               values.end());
  SL_CHECK(!values.empty(), "quantiles: no (non-NaN) values");
  std::sort(values.begin(), values.end());
  std::vector<double> out;
  out.reserve(probs.size());
  const double last = static_cast<double>(values.size() - 1);
  for (double p : probs) {
    SL_CHECK(p >= 0.0 && p <= 1.0, "quantiles: probability ", p, " is outside [0, 1]");
    const double pos = p * last;
    const size_t i = static_cast<size_t>(std::floor(pos));
    const double frac = pos - static_cast<double>(i);
    out.push_back(i + 1 < values.size() ? values[i] + frac * (values[i + 1] - values[i])
                                        : values[i]);
  }
  return out;
}

std::vector<double> quantile_edges(const std::vector<double>& values, int64_t bins) {
  SL_CHECK(bins >= 1, "quantile bins = ", bins, " must be >= 1");
  std::vector<double> probs(bins + 1);
  for (int64_t i = 0; i <= bins; ++i) probs[i] = static_cast<double>(i) / static_cast<double>(bins);
  std::vector<double> e = quantiles(values, probs);
  SL_CHECK(std::isfinite(e.front()) && std::isfinite(e.back()),
           "quantile bins: the values are not finite (range ", e.front(), " .. ", e.back(), ")");
  e.erase(std::unique(e.begin(), e.end()), e.end());
  if (e.size() == 1) e.push_back(e[0] + std::fmax(std::fabs(e[0]), 1.0) * 1e-12);
  return e;
}

}  // namespace scalelab::probes
