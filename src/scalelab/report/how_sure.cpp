#include "scalelab/report/how_sure.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

#include "scalelab/report/text.hpp"
#include "scalelab/report/user_claim_sections.hpp"

namespace scalelab::report {

HowSure how_sure(const ClaimRecord& c) {
  HowSure h;
  for (const Arm& a : c.arms) h.seeds = std::max<int64_t>(h.seeds, static_cast<int64_t>(a.seeds.size()));
  for (const Measurement& m : c.measurements) h.failed = std::max(h.failed, m.failed);
  h.word = c.provisional ? "provisional" : c.verdict == Verdict::not_testable ? "open" : c.marginal ? "marginal" : "firm";
  return h;
}

Span how_sure_badge(const HowSure& h) { return {Span::badge, h.word, {}}; }

std::string how_sure_detail(const ClaimRecord& c, const HowSure& h) {
  std::string s;
  if (h.seeds > 0) s = std::to_string(h.seeds) + (h.seeds == 1 ? " seed" : " seeds") + " per arm";
  if (h.seeds > 0)
    s += h.failed == 0 ? ", none failed" : ", " + std::to_string(h.failed) + " failed (counted as the worst value)";
  if (c.marginal)
    s += std::string(s.empty() ? "" : "; ") + "marginal: with every seed moved by its own spread it reads “" +
         (c.marginal_reads.empty() ? std::string("otherwise") : c.marginal_reads) + "”";
  if (c.provisional) s += std::string(s.empty() ? "" : "; ") + "quick mode";
  return s;
}

namespace {

bool same_number(double a, double b) { return std::fabs(a - b) <= 1e-9 * std::max(1.0, std::fabs(b)); }

// Whether `x` ("256", "L 16, d 64") appears in `label` as a whole word.
bool names_value(const std::string& label, const std::string& x) {
  if (x.empty()) return false;
  for (size_t at = label.find(x); at != std::string::npos; at = label.find(x, at + 1)) {
    const auto edge = [](char ch) { return !std::isalnum(static_cast<unsigned char>(ch)) && ch != '.'; };
    const bool before = at == 0 || edge(label[at - 1]);
    const bool after = at + x.size() == label.size() || edge(label[at + x.size()]);
    if (before && after) return true;
  }
  return false;
}

}  // namespace

std::string significant(double x, int digits) {
  if (x == 0 || !std::isfinite(x)) return format_number(x);
  const double scale = std::pow(10.0, digits - 1 - std::floor(std::log10(std::fabs(x))));
  return format_number(std::round(x * scale) / scale);
}

std::optional<double> key_number_spread(const ClaimRecord& c) {
  if (!c.key_number.value || !std::isfinite(*c.key_number.value)) return std::nullopt;
  std::vector<const Measurement*> matches;
  for (const Measurement& m : c.measurements)
    if (m.values.size() >= 2 && same_number(m.median, *c.key_number.value)) matches.push_back(&m);
  if (matches.size() > 1) {
    std::vector<const Measurement*> named;
    for (const Measurement* m : matches)
      if (names_value(c.key_number.label, m->x)) named.push_back(m);
    if (!named.empty()) matches = named;
  }
  if (matches.empty()) return std::nullopt;
  const double spread = matches.front()->max - matches.front()->min;
  for (const Measurement* m : matches)
    if (m->failed > 0 || !std::isfinite(m->max - m->min) || !same_number(m->max - m->min, spread)) return std::nullopt;
  return spread;
}

const char* key_threshold_name(const std::string& claim_id) {
  // Each pair read from the claim's criterion (ledger/criteria_init.hpp, criteria_training.hpp):
  // the key number is the quantity that threshold is applied to.
  static const std::map<std::string, const char*> names = {
      {"E2", "dims_share"},       {"E3", "dominates_ratio"},  {"E4", "matched_factor"},
      {"E8", "train_equal_rel"},  {"E9", "absorbed_rel"},     {"E10", "grad_ratio"},
      {"E11", "invariant_rel"},   {"E12", "broken_factor"},   {"A2", "within_share"},
      {"A3", "broken_factor"},    {"A4", "saturated_share"},  {"A6", "drop_factor"},
      {"A7", "broken_factor"},    {"A8", "little_difference"}, {"A10", "same_result_rel"},
      {"A11", "train_equal_rel"}, {"A13", "flag_share"},      {"B1", "needs_warmup_factor"},
      {"B2", "growth"},           {"B3", "stays_put_steps"},  {"B4", "tolerance"},
  };
  const auto it = names.find(claim_id);
  return it == names.end() ? "" : it->second;
}

std::optional<ThresholdMargin> threshold_margin(const ClaimRecord& c) {
  const std::string name = is_user_claim(c) ? "" : key_threshold_name(c.id);
  if (name.empty() || !c.key_number.value || !std::isfinite(*c.key_number.value)) return std::nullopt;
  if (!c.thresholds.is_object() || !c.thresholds.contains(name) || !c.thresholds.at(name).is_number()) return std::nullopt;
  const double threshold = c.thresholds.at(name).get<double>();
  if (!std::isfinite(threshold) || threshold == 0) return std::nullopt;
  ThresholdMargin m{*c.key_number.value, threshold, ""};
  const double ratio = m.key / threshold;
  if (ratio >= 0 && ratio <= 2) {
    // Whole percent from 10 %, one decimal below: the seeds' own noise is rarely finer.
    const double percent = (ratio - 1) * 100;
    const double shown = std::fabs(percent) >= 10 ? std::round(std::fabs(percent)) : std::round(std::fabs(percent) * 10) / 10;
    m.text = shown == 0 ? "at " + format_number(threshold)
                        : format_number(shown) + (percent < 0 ? " % below " : " % above ") + format_number(threshold);
  } else {
    m.text = significant(ratio, 2) + "× " + format_number(threshold);
  }
  return m;
}

}  // namespace scalelab::report
