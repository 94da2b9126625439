#include "scalelab/probes/summary.hpp"

#include <algorithm>
#include <cmath>

namespace scalelab::probes {

double median_of(std::vector<double> v) {
  v.erase(std::remove_if(v.begin(), v.end(), [](double x) { return std::isnan(x); }), v.end());
  if (v.empty()) return std::nan("");
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

SeedSummary::SeedSummary(const std::vector<ProbeRecord>& records) {
  for (const ProbeRecord& r : records) {
    for (const auto& [field, value] : r.values) {
      const Key key{r.probe, r.stack, r.layer, r.site, r.head, field, r.step};
      auto [it, fresh] = index_.try_emplace(key, spreads_.size());
      if (fresh) {
        SeedSpread s;
        s.probe = r.probe;
        s.stack = r.stack;
        s.layer = r.layer;
        s.site = r.site;
        s.head = r.head;
        s.field = field;
        s.step = r.step;
        spreads_.push_back(std::move(s));
      }
      SeedSpread& s = spreads_[it->second];
      s.seeds.push_back(r.seed);
      s.values.push_back(value);
    }
  }
  for (SeedSpread& s : spreads_) {
    s.median = median_of(s.values);
    s.min = s.max = std::nan("");
    s.finite_seeds = 0;
    for (double v : s.values) {
      if (std::isnan(v)) continue;
      s.min = s.finite_seeds ? std::min(s.min, v) : v;
      s.max = s.finite_seeds ? std::max(s.max, v) : v;
      ++s.finite_seeds;
    }
  }
}

const SeedSpread* SeedSummary::find(const std::string& probe, const std::string& stack,
                                    int64_t layer, const std::string& site, int64_t head,
                                    const std::string& field, int64_t step) const {
  auto it = index_.find(Key{probe, stack, layer, site, head, field, step});
  return it == index_.end() ? nullptr : &spreads_[it->second];
}

std::vector<std::tuple<std::string, int64_t, std::string>> SeedSummary::sites(
    const std::string& probe) const {
  std::vector<std::tuple<std::string, int64_t, std::string>> out;
  for (const auto& [key, i] : index_)
    if (std::get<0>(key) == probe) out.emplace_back(std::get<1>(key), std::get<2>(key), std::get<3>(key));
  // Encoder, decoder, model; layers in order; sublayers in the order they run.
  auto stack_rank = [](const std::string& s) { return s == "encoder" ? 0 : s == "decoder" ? 1 : 2; };
  auto site_rank = [](const std::string& s) {
    return s == "self_attn" ? 0 : s == "cross_attn" ? 1 : s == "ffn" ? 2 : 3;
  };
  std::sort(out.begin(), out.end(), [&](const auto& a, const auto& b) {
    const auto ka = std::make_tuple(stack_rank(std::get<0>(a)), std::get<1>(a), site_rank(std::get<2>(a)),
                                    std::get<2>(a));
    const auto kb = std::make_tuple(stack_rank(std::get<0>(b)), std::get<1>(b), site_rank(std::get<2>(b)),
                                    std::get<2>(b));
    return ka < kb;
  });
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

Json SeedSummary::to_json() const {
  auto num = [](double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); };
  Json groups = Json::array();
  for (const SeedSpread& s : spreads_) {
    Json values = Json::array();
    for (double v : s.values) values.push_back(num(v));
    groups.push_back({{"probe", s.probe}, {"stack", s.stack}, {"layer", s.layer},
                      {"site", s.site}, {"head", s.head}, {"step", s.step}, {"field", s.field},
                      {"seeds", s.seeds}, {"values", values}, {"finite_seeds", s.finite_seeds},
                      {"median", num(s.median)}, {"min", num(s.min)}, {"max", num(s.max)}});
  }
  return {{"schema", kRecordSchema}, {"groups", groups}};
}

}  // namespace scalelab::probes
