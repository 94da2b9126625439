#include "scalelab/ledger/experiments.hpp"

#include <cmath>
#include <limits>

#include "scalelab/core/error.hpp"
#include "scalelab/model/presets.hpp"

namespace scalelab::ledger {
namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
double num(const Json& j) { return j.is_number() ? j.get<double>() : kNaN; }
}  // namespace

Json training_tree(const LedgerMode& mode) {
  if (mode.quick) {
    // The copy task of the Annotated Transformer, small enough for seconds per run.
    return {{"model", {{"arch", "encoder_decoder"}, {"d_model", 32}, {"n_heads", 2}, {"d_ff", 64},
                       {"encoder_layers", 1}, {"decoder_layers", 1}, {"norm", "post"},
                       {"dropout", 0.0}, {"max_len", 32}}},
            {"data", {{"task", "copy"}, {"symbols", 10}, {"min_len", 1}, {"max_len", 8},
                      {"train_size", 4000}, {"valid_size", 200}}},
            {"train", {{"steps", 150}, {"batch_size", 32}, {"optimizer", "adam"}, {"beta2", 0.98},
                       {"eps", 1e-9}, {"schedule", "warmup_cosine"}, {"lr", 3e-3}, {"warmup", 20},
                       {"min_lr", 1e-5}, {"clip_norm", 0.0}, {"label_smoothing", 0.1},
                       {"eval_every", 0}, {"eval_examples", 0}, {"log_every", 10},
                       {"run_dir", "(ledger: in memory)"}}}};
  }
  // G2P on CMUdict: the published model's Post-LN encoder-decoder, small (d 64, 2+2 layers).
  return {{"model", {{"arch", "encoder_decoder"}, {"d_model", 64}, {"n_heads", 4}, {"d_ff", 256},
                     {"encoder_layers", 2}, {"decoder_layers", 2}, {"norm", "post"},
                     {"dropout", 0.0}, {"max_len", 48}}},
          {"data", {{"task", "cmudict"}, {"max_eval_words", 500}}},
          {"train", {{"steps", 800}, {"batch_size", 64}, {"length_bucketing", true},
                     {"optimizer", "adam"}, {"beta2", 0.98}, {"eps", 1e-9},
                     {"schedule", "warmup_cosine"}, {"lr", 2e-3}, {"warmup", 100},
                     {"min_lr", 1e-5}, {"clip_norm", 0.0}, {"label_smoothing", 0.1},
                     {"eval_every", 0}, {"eval_examples", 0}, {"log_every", 20},
                     {"run_dir", "(ledger: in memory)"}}}};
}

Json observe(const LedgerMode& mode) {
  return {{"observe_every", training_tree(mode)["train"]["steps"].get<int64_t>() / 8}};
}

Json arm_config(const Json& tree, const std::vector<std::string>& overrides, const std::string& preset) {
  Json t = tree;
  if (!preset.empty()) {
    Json base = {{"model", find_preset(preset).model}};
    base.update(t, /*merge_objects=*/true);
    t = std::move(base);
    t["preset"] = preset;
  }
  return resolve_config(t, overrides);
}

std::vector<double> per_seed(const Arm& arm, const std::function<double(const Json&)>& f) {
  std::vector<double> out;
  for (const Json& r : arm.results) out.push_back(f(r));
  return out;
}


Curve loss_curve(const Json& r) {
  Curve c;
  for (const Json& p : r["curve"]) c.push_back({num(p[0]), num(p[1])});
  return c;
}

Curve grad_norm_curve(const Json& r) {
  Curve c;
  for (const Json& p : r["curve"])
    if (p[2].is_number()) c.push_back({num(p[0]), num(p[2])});
  return c;
}

double first_loss(const Json& r) {
  const Curve c = loss_curve(r);
  return c.empty() ? kNaN : c.front().second;
}

namespace {
const Json* nearest_observation(const Json& r, int64_t step) {
  const Json* best = nullptr;
  int64_t gap = 0;
  for (const Json& o : r["observations"]) {
    const int64_t g = std::abs(o["step"].get<int64_t>() - step);
    if (!best || g < gap) best = &o, gap = g;
  }
  return best;
}
}  // namespace

double observed_grad(const Json& r, int64_t step, const std::string& stack, int64_t layer) {
  const Json* o = nearest_observation(r, step);
  if (!o) return kNaN;
  for (const Json& g : (*o)["grad_layers"])
    if (g[0] == stack && g[1] == layer) return num(g[2]);
  return kNaN;
}

double observed_attn(const Json& r, int64_t step, const std::string& stack, int64_t layer,
                     const std::string& site, int column) {
  const Json* o = nearest_observation(r, step);
  if (!o) return kNaN;
  for (const Json& a : (*o)["attn"])
    if (a[0] == stack && a[1] == layer && a[2] == site) return num(a[column]);
  return kNaN;
}

Json curve_series(const std::string& label, const Arm& arm, const std::function<Curve(const Json&)>& curve) {
  std::vector<Curve> curves;
  size_t n = 0;
  for (const Json& r : arm.results) {
    curves.push_back(curve(r));
    n = std::max(n, curves.back().size());
  }
  Json points = Json::array();
  for (size_t i = 0; i < n; ++i) {
    std::vector<double> ys;
    double x = kNaN;
    for (const Curve& c : curves)
      if (i < c.size()) x = c[i].first, ys.push_back(c[i].second);
    points.push_back(band_point(x, ys));
  }
  return {{"label", label}, {"points", points}};
}

bool any_diverged(const Arm& arm) {
  for (const Json& r : arm.results)
    if (diverged(r)) return true;
  return false;
}

criteria::PairedRuns paired_finals(const Arm& test, const Arm& base) {
  return {per_seed(test, final_valid_nll), per_seed(base, final_valid_nll)};
}

std::vector<double> run_gaps(const Arm& a, const Arm& b) {
  SL_CHECK(a.results.size() == b.results.size(), "run_gaps: ", a.name, " has ", a.results.size(),
           " seeds, ", b.name, " ", b.results.size());
  std::vector<double> out;
  for (size_t k = 0; k < a.results.size(); ++k) {
    const Curve ca = loss_curve(a.results[k]), cb = loss_curve(b.results[k]);
    const double fa = final_valid_nll(a.results[k]), fb = final_valid_nll(b.results[k]);
    if (!std::isfinite(fb) || cb.empty()) {
      out.push_back(kNaN);
      continue;
    }
    if (!std::isfinite(fa) || ca.size() != cb.size()) {
      out.push_back(std::numeric_limits<double>::infinity());
      continue;
    }
    double gap = std::abs(fa - fb) / std::abs(fb);
    const size_t n = ca.size();
    for (int i = 1; i <= criteria::kCurvePoints; ++i) {
      const size_t at = std::min(n - 1, (n - 1) * size_t(i) / size_t(criteria::kCurvePoints));
      const double la = ca[at].second, lb = cb[at].second;
      gap = std::max(gap, std::isfinite(la) && std::isfinite(lb) ? std::abs(la - lb) / std::abs(lb)
                                                                 : std::numeric_limits<double>::infinity());
    }
    out.push_back(gap);
  }
  return out;
}

double median_final(const Arm& arm) {
  std::vector<double> v;
  for (const Json& r : arm.results) {
    const double x = final_valid_nll(r);
    v.push_back(std::isfinite(x) ? x : std::numeric_limits<double>::infinity());
  }
  return median_of(v);
}

void plot_loss_curves(ClaimRun& run, const std::string& id, const std::string& title,
                      const std::vector<std::string>& arms) {
  Json p = line_plot(id, title, "training step", "training loss (nats/token, label-smoothed)");
  for (const std::string& a : arms) p["series"].push_back(curve_series(a, run.arm(a)));
  run.plot(p);
}

Spread record_final(ClaimRun& run, const std::string& arm) {
  return run.measure("final valid loss", arm, nullptr, "nats", per_seed(run.arm(arm), final_valid_nll));
}

double probe_value(const Json& r, const std::string& probe, const std::string& stack, int64_t layer,
                   const std::string& site, const std::string& field) {
  for (const Json& rec : r["records"]) {
    if (rec["probe"] == probe && rec["stack"] == stack && rec["layer"] == layer && rec["site"] == site) {
      const Json& v = rec["values"];
      return v.contains(field) ? num(v[field]) : kNaN;
    }
  }
  return kNaN;
}

Json series(const std::string& label, const std::vector<std::pair<double, std::vector<double>>>& points) {
  Json p = Json::array();
  for (const auto& [x, ys] : points) p.push_back(band_point(x, ys));
  return {{"label", label}, {"points", p}};
}

}  // namespace scalelab::ledger

#include "scalelab/model/transformer.hpp"
#include "scalelab/train/trainer.hpp"

namespace scalelab::ledger {

std::vector<float> tensor_at_init(const Json& config, int64_t seed, int64_t batch_size, InitTensor what) {
  RunConfig rc = parse_run_config(config);
  const TaskData& data = shared_task_data(rc.data);
  rc.model = resolve_vocab(rc.model, data);
  rc.model.seed = static_cast<uint64_t>(seed);
  Transformer<float> model(rc.model);
  const bool enc = rc.model.arch == Architecture::encoder_decoder;
  const std::vector<Batch> batches = batches_in_order(data.valid, batch_size, batch_layout(data, enc));
  SL_CHECK(!batches.empty(), "tensor_at_init: the validation split is empty");
  const Batch& b = batches.front();
  ModelInput in{.batch = b.size, .src_len = b.src_len, .tgt_len = b.tgt_len, .tgt = b.tgt_in.data()};
  if (enc) in.src = b.src.data(), in.src_lengths = b.src_lengths.data();
  const Tensor<float>& logits = model.forward(in, ForwardMode{});
  const Tensor<float>& t = what == InitTensor::logits ? logits : model.stack_input(enc);
  return std::vector<float>(t.data(), t.data() + t.numel());
}

double relative_difference(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size() || a.empty()) return std::numeric_limits<double>::quiet_NaN();
  double diff = 0, scale = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    diff = std::max(diff, std::abs(double(a[i]) - double(b[i])));
    scale = std::max(scale, std::abs(double(a[i])));
  }
  return scale > 0 ? diff / scale : diff;
}

std::vector<double> init_differences(ClaimRun& run, const Arm& a, const Arm& b, int64_t batch_size, InitTensor what) {
  const Json inputs = {{"a", a.config}, {"b", b.config}, {"seeds", a.seeds}, {"batch_size", batch_size},
                       {"tensor", what == InitTensor::logits ? "logits" : "encoder input"}};
  return run.computed("init difference, " + a.name + " vs " + b.name, inputs, {"difference"}, [&] {
               std::vector<double> per;
               for (size_t k = 0; k < a.seeds.size(); ++k)
                 per.push_back(relative_difference(tensor_at_init(a.config, a.seeds[k], batch_size, what),
                                                   tensor_at_init(b.config, b.seeds[k], batch_size, what)));
               ComputedValues v;
               v.set("difference", per);
               return v;
             })
      .at("difference");
}

}  // namespace scalelab::ledger
