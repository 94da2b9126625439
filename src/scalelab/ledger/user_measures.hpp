// ledger/user_measures: the quantities a claim file may measure (docs/claims-file.md, "Measures"),
// each a number per seed read from an arm's results. A failed run gives NaN or +inf, which the
// criterion reads as the worst value.
#pragma once
#include <cstdint>
#include <map>
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
  int64_t points = 5;        // loss_curve: evenly spaced points of the training-loss curve
  std::string op = "all";    // f16_overflow: a precision op (precision_op_names) or every op
  std::string when = "training";  // f16_overflow: training (train.precision = f16) or init
  std::vector<int64_t> widths;    // coord_check: the d_model values every arm runs at
  int64_t first_steps = 4;        // coord_check: training steps observed from step 1
  std::string of = "sublayer";    // coord_check: sublayer (f(x)) or residual (x + f(x))
};

// "final_valid_loss", "final_train_loss", "steps_to_loss", "loss_curve", "max_attention_logit",
// "attention_entropy", "saturated_share", "grad_norm", "f16_overflow", "best_lr", "probe",
// "coord_check".
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

// The value per seed of an arm (for best_lr: each seed's own best rate over the arm's grid; for
// loss_curve: the mean over its points, for the record and the plot against the sweep; not for
// coord_check).
std::vector<double> measure_per_seed(const MeasureSpec& m, const Arm& arm);

// Measures judged at several points per seed: [point][seed]. loss_curve: the training loss at
// `points` evenly spaced fractions of the run (a diverged seed: +inf at every point); every other
// measure one point, measure_per_seed. A criterion must hold at every point for a seed to meet it.
std::vector<std::vector<double>> measure_points(const MeasureSpec& m, const Arm& arm);
// The step each point of loss_curve reads, for an arm of `steps` training steps.
std::vector<int64_t> loss_curve_steps(const MeasureSpec& m, int64_t steps);

// f16_overflow: the names of the ops counted (kernels/precision.hpp), for validation.
std::vector<std::string> precision_op_names();
// f16_overflow: overflowing results per op (op -> per seed) of an arm, the ops with an overflow on
// some seed; a diverged training run gives its counts until it stopped. `all`: the judged total
// (a diverged run +inf).
std::map<std::string, std::vector<double>> overflow_per_op(const Arm& arm, bool at_init);

// coord_check (the coordinate check of Microsoft's mup): each arm runs at every width for
// first_steps steps at its own learning rate, observed at every step. Per seed, the coordinate
// size of a site at step t is the RMS of its activation (f(x) or x + f(x)) in the forward of step
// t (step 1: at initialisation). The value is the largest |slope| of log2(size) on log2(width)
// over the sites and the steps: 0 when no activation changes size with width, 1 when one grows
// (or shrinks) in proportion to it.
struct CoordSizes {
  // (site "stack layer site", step) -> per width -> per seed RMS; NaN where a run failed
  std::map<std::pair<std::string, int64_t>, std::vector<std::vector<double>>> rms;
};
CoordSizes coord_sizes(const MeasureSpec& m, const std::vector<const Arm*>& by_width);
std::vector<double> coord_check_per_seed(const MeasureSpec& m, const std::vector<const Arm*>& by_width);

}  // namespace scalelab::ledger
