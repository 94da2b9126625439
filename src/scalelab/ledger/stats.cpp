#include "scalelab/ledger/stats.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "scalelab/core/error.hpp"

namespace scalelab::ledger {

double failed_as_worst(double x) { return std::isfinite(x) ? x : std::numeric_limits<double>::infinity(); }

double median_of(std::vector<double> v) {
  if (v.empty()) return std::numeric_limits<double>::quiet_NaN();
  for (double& x : v) x = failed_as_worst(x);  // also keeps NaN out of the sort
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

Spread spread_of(const std::vector<double>& values) {
  Spread s;
  s.n = static_cast<int64_t>(values.size());
  if (values.empty()) {
    s.median = s.min = s.max = std::numeric_limits<double>::quiet_NaN();
    return s;
  }
  std::vector<double> v;
  for (double x : values) {
    if (!std::isfinite(x)) ++s.failed;
    v.push_back(failed_as_worst(x));
  }
  s.median = median_of(v);
  s.min = *std::min_element(v.begin(), v.end());
  s.max = *std::max_element(v.begin(), v.end());
  return s;
}

double relative_spread(const std::vector<double>& values) {
  if (values.size() < 2) return 0.0;
  const Spread s = spread_of(values);
  if (s.failed > 0 || s.median == 0) return std::numeric_limits<double>::infinity();
  return (s.max - s.min) / std::abs(s.median);
}

std::string Vote::text() const { return std::to_string(yes) + " of " + std::to_string(yes + no) + " seeds"; }

Vote vote(const std::vector<double>& per_seed, const std::function<bool(double)>& meets) {
  Vote v;
  for (double x : per_seed) (!std::isnan(x) && meets(failed_as_worst(x)) ? v.yes : v.no) += 1;
  v.outcome = v.yes > 0 && v.no == 0 ? Outcome::yes : v.no > 0 && v.yes == 0 ? Outcome::no : Outcome::undecided;
  return v;
}

namespace {
thread_local int seed_shift_direction = 0;
thread_local int64_t marginal_decisions = 0;

std::vector<double> moved(const std::vector<double>& values, double by) {
  std::vector<double> out;
  for (double x : values) out.push_back(std::isfinite(x) ? x + by : x);
  return out;
}
}  // namespace

SeedShift::SeedShift(int direction) : previous_(seed_shift_direction) {
  SL_CHECK(direction == -1 || direction == 1, "SeedShift: direction ", direction, ", allowed -1 or +1");
  seed_shift_direction = direction;
}
SeedShift::~SeedShift() { seed_shift_direction = previous_; }
int SeedShift::direction() { return seed_shift_direction; }

SeedDecision decide_by_seeds(const std::vector<double>& per_seed, const std::function<bool(double)>& meets) {
  double lo = INFINITY, hi = -INFINITY;
  for (double x : per_seed)
    if (std::isfinite(x)) lo = std::min(lo, x), hi = std::max(hi, x);
  SeedDecision d;
  d.spread = hi > lo ? hi - lo : 0.0;
  const std::vector<double> values = seed_shift_direction == 0 ? per_seed : moved(per_seed, seed_shift_direction * d.spread);
  d.vote = vote(values, meets);
  if (d.vote.outcome != Outcome::undecided && per_seed.size() > 1 && d.spread > 0)
    for (double by : {-d.spread, d.spread})
      if (vote(moved(values, by), meets).outcome != d.vote.outcome) d.marginal = true;
  marginal_decisions += d.marginal;
  return d;
}

int64_t marginal_decisions_so_far() { return marginal_decisions; }

std::pair<double, double> linear_fit(const std::vector<double>& x, const std::vector<double>& y) {
  SL_CHECK(x.size() == y.size() && x.size() >= 2, "linear_fit needs >= 2 paired points, got ",
           x.size(), " x and ", y.size(), " y");
  const double n = double(x.size());
  double mx = 0, my = 0;
  for (size_t i = 0; i < x.size(); ++i) mx += x[i] / n, my += y[i] / n;
  double sxy = 0, sxx = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) * (x[i] - mx);
  }
  SL_CHECK(sxx > 0, "linear_fit: all x are equal (", mx, ")");
  const double b = sxy / sxx;
  return {my - b * mx, b};
}

double slope_loglog(const std::vector<double>& x, const std::vector<double>& y) {
  SL_CHECK(x.size() == y.size(), "slope_loglog: ", x.size(), " x and ", y.size(), " y");
  std::vector<double> lx, ly;
  for (size_t i = 0; i < x.size(); ++i) {
    SL_CHECK(x[i] > 0 && y[i] > 0, "slope_loglog: point ", i, " = (", x[i], ", ", y[i],
             ") is not positive");
    lx.push_back(std::log(x[i]));
    ly.push_back(std::log(y[i]));
  }
  return linear_fit(lx, ly).second;
}

double roughness(const Curve& c) {
  if (c.size() < 3) return 0.0;
  double second = 0, level = 0;
  for (size_t i = 1; i + 1 < c.size(); ++i)
    second += std::abs(c[i + 1].second - 2 * c[i].second + c[i - 1].second);
  for (const auto& p : c) level += std::abs(p.second);
  second /= double(c.size() - 2);
  level /= double(c.size());
  return level > 0 ? second / level : 0.0;
}

double steps_to(const Curve& c, double target, int64_t window) {
  const int64_t w = std::max<int64_t>(1, window);
  for (size_t i = 0; i < c.size(); ++i) {
    const size_t lo = i + 1 >= size_t(w) ? i + 1 - size_t(w) : 0;
    double sum = 0;
    for (size_t j = lo; j <= i; ++j) sum += c[j].second;
    if (std::isfinite(sum) && sum / double(i - lo + 1) <= target) return c[i].first;
  }
  return -1;
}

double tail_mean(const Curve& c, double fraction) {
  SL_CHECK(fraction > 0 && fraction <= 1, "tail_mean: fraction = ", fraction, " must be in (0, 1]");
  if (c.empty()) return std::numeric_limits<double>::quiet_NaN();
  const size_t k = std::max<size_t>(1, size_t(std::ceil(double(c.size()) * fraction)));
  double sum = 0;
  for (size_t i = c.size() - k; i < c.size(); ++i) sum += c[i].second;
  return sum / double(k);
}

}  // namespace scalelab::ledger
