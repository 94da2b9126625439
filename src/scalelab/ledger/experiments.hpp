// ledger/experiments: what the claims share: the base configs of their runs, reading results
// (curves, final losses, probe values) and turning per-seed values into plot series.
//
// Training claims train the project's own Transformer on a real task: G2P on CMUdict in the full
// ledger (a small Post-LN encoder-decoder sized so that the whole ledger fits its budget), the
// synthetic copy task in --quick. Probe claims run the same models at initialisation over seeds.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "scalelab/ledger/claim.hpp"
#include "scalelab/ledger/criteria_training.hpp"

namespace scalelab::ledger {

// The base config tree of a training claim (before overrides): see experiments.cpp for values.
Json training_tree(const LedgerMode& mode);
// The options of every training arm: observe the model (per-layer gradient norms, attention
// statistics) at step 1 and 8 times more over the run.
Json observe(const LedgerMode& mode);
// The resolved config of `tree` with overrides; `preset` merges a preset's [model] first.
Json arm_config(const Json& tree, const std::vector<std::string>& overrides,
                const std::string& preset = "");

// Per-seed values of an arm (result -> number).
std::vector<double> per_seed(const Arm& arm, const std::function<double(const Json&)>& f);

// Training results (final_valid_nll and diverged: runs.hpp).
Curve loss_curve(const Json& result);         // (step, training loss)
Curve grad_norm_curve(const Json& result);    // (step, global gradient norm before clipping)
double first_loss(const Json& result);
// Observed per-layer gradient norm at the observation nearest to `step`; NaN if absent.
double observed_grad(const Json& result, int64_t step, const std::string& stack, int64_t layer);
// Observed attention statistic (column: 3 max|logit|, 4 entropy, 5 saturated, 6 var, 7 within)
// of (stack, layer, site) at the observation nearest to `step`.
double observed_attn(const Json& result, int64_t step, const std::string& stack, int64_t layer,
                     const std::string& site, int column);
// The median over seeds of an arm's loss curves, with a min..max band: a plot series.
Json curve_series(const std::string& label, const Arm& arm,
                  const std::function<Curve(const Json&)>& curve = loss_curve);
bool any_diverged(const Arm& arm);
// Per-seed final valid losses of two arms that share seeds (NaN: a failed run).
criteria::PairedRuns paired_finals(const Arm& test, const Arm& base);
// Per seed, the largest relative gap |a - b| / b between two arms' runs over the training loss at
// criteria::kCurvePoints evenly spaced points of the curve and the final valid loss: +inf where
// `a`'s run failed, NaN where `b`'s did.
std::vector<double> run_gaps(const Arm& a, const Arm& b);
double median_final(const Arm& arm);  // median final valid nll (diverged seeds count as +inf)

// A loss-curve plot of the named arms (median over seeds with a min..max band).
void plot_loss_curves(ClaimRun& run, const std::string& id, const std::string& title,
                      const std::vector<std::string>& arms);
// Records the arm's per-seed final valid losses as a measurement; returns their spread.
Spread record_final(ClaimRun& run, const std::string& arm);

// Probe results (records with head = -1, docs/probes.md).
double probe_value(const Json& result, const std::string& probe, const std::string& stack,
                   int64_t layer, const std::string& site, const std::string& field);

// A series of (x, per-seed values) points.
Json series(const std::string& label, const std::vector<std::pair<double, std::vector<double>>>& points);

}  // namespace scalelab::ledger

namespace scalelab::ledger {
// Builds the model of a resolved config with model.seed = seed (vocab from its data), runs the
// first `batch_size` validation examples through it in eval mode and returns a copy of the
// requested tensor: the logits, or the encoder's layer-0 input (after the embedding LayerNorm).
enum class InitTensor { logits, encoder_input };
std::vector<float> tensor_at_init(const Json& config, int64_t seed, int64_t batch_size, InitTensor what);
// max |a − b| / max |a| (NaN if the sizes differ).
double relative_difference(const std::vector<float>& a, const std::vector<float>& b);
// Per seed of `a` (which `b` shares), relative_difference of the two arms' `what` at init over
// `batch_size` validation examples: a computation of the claim, cached (computed.hpp).
std::vector<double> init_differences(ClaimRun& run, const Arm& a, const Arm& b, int64_t batch_size, InitTensor what);
}  // namespace scalelab::ledger
