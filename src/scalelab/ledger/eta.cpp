#include "scalelab/ledger/eta.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace scalelab::ledger {

double run_units(const RunSpec& spec) {
  const Json& m = spec.config["model"];
  const double d = m.value("d_model", 64.0), ff = m.value("d_ff", 256.0);
  const double layers = m.value("encoder_layers", 1.0) + m.value("decoder_layers", 1.0);
  const double per_token = layers * (4 * d * d + 2 * d * ff) + 2e4;  // + per-token overheads
  if (spec.kind == RunKind::probe) {
    // Initialising the weights dominates large models; the forward and backward the small ones.
    const double tokens = spec.options.value("batches", 2.0) * spec.options.value("batch_size", 64.0) * 12;
    return 3 * tokens * per_token + 20 * layers * (4 * d * d + 2 * d * ff) + 5e6;
  }
  const Json& t = spec.config["train"];
  const double precision = t.value("precision", std::string("f32")) == "f32" ? 1.0 : 4.0;
  return t.value("steps", 1000.0) * t.value("batch_size", 64.0) * 12 * 3 * per_token * precision;
}

std::vector<size_t> run_order(const std::vector<RunSize>& runs) {
  std::vector<size_t> train, probe, out;
  for (size_t i = 0; i < runs.size(); ++i) (runs[i].kind == RunKind::train ? train : probe).push_back(i);
  const auto larger_first = [&](size_t a, size_t b) { return runs[a].units > runs[b].units; };
  std::stable_sort(train.begin(), train.end(), larger_first);
  std::stable_sort(probe.begin(), probe.end(), larger_first);
  for (size_t a = 0, b = 0; a < train.size() || b < probe.size();) {
    if (a < train.size()) out.push_back(train[a++]);
    if (b < probe.size()) out.push_back(probe[b++]);
  }
  return out;
}

void Eta::planned(RunKind kind, double units, bool later_round) {
  PerKind& k = of(kind);
  k.todo_units += units;
  if (later_round) k.later_units = std::max(0.0, k.later_units - units);
}

void Eta::expect_later(RunKind kind, double units) { of(kind).later_units += units; }

void Eta::done(RunKind kind, double units, double seconds) {
  PerKind& k = of(kind);
  k.done_units += units;
  k.done_seconds += seconds;
  k.todo_units = std::max(0.0, k.todo_units - units);
}

double Eta::remaining_seconds(int64_t jobs) const {
  // Seconds per unit of each kind; a kind with no run done yet borrows the other's rate.
  double rate[2];
  double any_units = 0, any_seconds = 0;
  for (const PerKind& k : kinds_) any_units += k.done_units, any_seconds += k.done_seconds;
  if (any_units <= 0) return std::numeric_limits<double>::quiet_NaN();
  for (int i = 0; i < 2; ++i)
    rate[i] = kinds_[i].done_units > 0 ? kinds_[i].done_seconds / kinds_[i].done_units : any_seconds / any_units;
  double seconds = 0;
  for (int i = 0; i < 2; ++i) seconds += (kinds_[i].todo_units + kinds_[i].later_units) * rate[i];
  return seconds / double(std::max<int64_t>(1, jobs));
}

}  // namespace scalelab::ledger
