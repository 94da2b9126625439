// ledger/user_measures: the quantities a claim file may measure (docs/claims-file.md, "Measures"),
// each a number per seed read from an arm's results. A failed run gives NaN or +inf, which the
// criterion reads as the worst value.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "scalelab/ledger/claim.hpp"

namespace scalelab::ledger {

struct MeasureSpec {
  std::string name;          // one of measure_names()
  double target = NAN;       // steps_to_loss: the training loss to reach
  std::string stack = "encoder", site = "self_attn";  // grad_norm, probe
  int64_t layer = 0;         // grad_norm, probe
  int64_t step = 1;          // grad_norm: the observation nearest this step
  std::string probe, field;  // probe: a probe and one of its record's fields (docs/probes.md)
};

// "final_valid_loss", "final_train_loss", "steps_to_loss", "max_attention_logit",
// "attention_entropy", "saturated_share", "grad_norm", "best_lr", "probe".
const std::vector<std::string>& measure_names();
// The keys a measure table may hold besides "name" (e.g. steps_to_loss: target).
std::vector<std::string> measure_keys(const std::string& name);
std::string measure_unit(const MeasureSpec& m);
std::string measure_label(const MeasureSpec& m);  // "final valid loss", "steps to loss 1.5"

// A probe measure reads a probe arm (runs at initialisation); the others train.
bool measured_at_init(const MeasureSpec& m);
// best_lr: every seed runs every rate of the arm's grid, so the rate itself is the subject.
bool measures_learning_rate(const MeasureSpec& m);
// Ratios of this measure are judged on a log2 scale (equivalent: |log2(a/b)| <= tolerance).
bool log_scale_measure(const MeasureSpec& m);

// The value per seed of an arm (for best_lr: each seed's own best rate over the arm's grid).
std::vector<double> measure_per_seed(const MeasureSpec& m, const Arm& arm);

}  // namespace scalelab::ledger
