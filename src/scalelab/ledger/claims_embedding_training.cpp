// Claims E7–E12 (seed 000): what the embedding scale does to training.
#include <cmath>

#include "scalelab/ledger/claim_groups.hpp"
#include "scalelab/ledger/criteria.hpp"
#include "scalelab/ledger/experiments.hpp"

namespace scalelab::ledger {
namespace {



// ---- E7 -------------------------------------------------------------------------------------

Claim e7() {
  Claim c;
  c.info = {"E7", "embedding",
            "A learnable scalar scale is not better than the fixed sqrt(d_model) and can slow convergence.",
            "Training (G2P; quick: copy), N(0,1/d) embeddings, paired seeds: fixed ×sqrt(d), a "
            "learned scalar initialised at sqrt(d), a learned scalar initialised at 1.",
            "Per paired seed, the target loss = 1.05 × the fixed arm's mean training loss over the last "
            "20 % of its curve. Two parts, each per learned arm and decided on every seed, every arm at "
            "its own best learning rate: \"not better\" = it ends no more than 0.01 nats below the fixed "
            "one; \"slows\" = its steps to the target >= 1.2x the fixed arm's (or never)."};
  c.plan = [](ClaimRun& r) {
    const LedgerMode& m = r.mode();
    const Json tree = training_tree(m);
    const auto seeds = m.seeds(m.train_seeds);
    r.add_arm("fixed sqrt(d)", RunKind::train, arm_config(tree, {}), seeds, observe(m));
    r.add_arm("learned, init sqrt(d)", RunKind::train, arm_config(tree, {"model.embedding.scale=\"learned\""}), seeds, observe(m));
    r.add_arm("learned, init 1", RunKind::train,
              arm_config(tree, {"model.embedding.scale=\"learned\"", "model.embedding.learned_init=1.0"}), seeds, observe(m));
    r.threshold("better_margin_nats", criteria::kBetterMargin);
    r.threshold("slower_factor", criteria::kSlowerFactor);
  };
  c.evaluate = [](ClaimRun& r) {
    const std::vector<std::string> names = {"fixed sqrt(d)", "learned, init sqrt(d)", "learned, init 1"};
    plot_loss_curves(r, "E7-loss", "Training loss: fixed vs learned embedding scale", names);
    const Arm& fixed = r.arm(names[0]);
    for (const std::string& n : names) record_final(r, n);
    // Per seed, the target is 1.05x the fixed arm's own late training loss (paired).
    std::vector<double> targets, fixed_steps;
    for (const Json& res : fixed.results) {
      targets.push_back(1.05 * tail_mean(loss_curve(res)));
      const double s = steps_to(loss_curve(res), targets.back());
      fixed_steps.push_back(s < 0 ? NAN : s);
    }
    r.fact("target_loss", median_of(targets));
    r.measure("steps to target loss", fixed.name, nullptr, "steps", fixed_steps);
    std::vector<criteria::LearnedArm> learned;
    for (size_t i = 1; i < names.size(); ++i) {
      const Arm& a = r.arm(names[i]);
      std::vector<double> ratio;
      for (size_t k = 0; k < a.results.size(); ++k) {
        const double s = steps_to(loss_curve(a.results[k]), targets[k]);
        ratio.push_back(std::isnan(fixed_steps[k]) ? NAN : s < 0 ? INFINITY : s / fixed_steps[k]);
      }
      r.measure("steps to target, over the fixed arm's", a.name, nullptr, "", ratio);
      learned.push_back({i == 1 ? "the learned scale starts at sqrt(d)" : "the learned scale starts at 1",
                         paired_finals(a, fixed), ratio});
      r.measure("final loss minus the fixed arm's", a.name, nullptr, "nats", criteria::paired_differences(learned.back().final_loss));
    }
    r.key_number("final valid loss, learned (init 1) − fixed", median_of(criteria::paired_differences(learned[1].final_loss)), "nats");
    return criteria::learnable_scale(learned);
  };
  return c;
}

// ---- E8 -------------------------------------------------------------------------------------

struct Setting {
  std::string optimizer;
  bool tied;
  std::string name() const { return (optimizer == "adam" ? "Adam" : "SGD") + std::string(tied ? ", tied" : ", untied"); }
  std::vector<std::string> overrides() const {
    std::vector<std::string> o = {std::string("model.tie_output=") + (tied ? "true" : "false")};
    if (optimizer == "sgd") o.insert(o.end(), {"train.optimizer=\"sgd\"", "train.lr=0.1"});
    return o;
  }
};
const std::vector<Setting> kSettings = {{"adam", false}, {"adam", true}, {"sgd", false}, {"sgd", true}};

// Paired comparison of two parametrisations in each setting: init logits and the training runs.
std::vector<criteria::Equivalence> equivalences(ClaimRun& r, const std::string& a_prefix,
                                                const std::string& b_prefix) {
  std::vector<criteria::Equivalence> out;
  Json bars = {{"id", r.info().id + "-gap"}, {"title", "Largest paired loss gap over the curve and the end, median over seeds"},
               {"kind", "bars"}, {"x_label", "setting"}, {"y_label", "relative difference"},
               {"cols", Json::array()}, {"series", Json::array()}};
  Json pts = Json::array();
  for (size_t i = 0; i < kSettings.size(); ++i) {
    const Setting& s = kSettings[i];
    const Arm& a = r.arm(a_prefix + ", " + s.name());
    const Arm& b = r.arm(b_prefix + ", " + s.name());
    const std::vector<double> init = init_differences(r, a, b, 32, InitTensor::logits);
    const std::vector<double> gaps = run_gaps(b, a);
    r.measure("init logits max |Δ| / max |logits|", s.name(), nullptr, "", init);
    r.measure("largest loss gap over the curve and the end", s.name(), nullptr, "", gaps);
    record_final(r, a.name);
    record_final(r, b.name);
    r.fact("baseline_seed_spread_" + s.name(), relative_spread(per_seed(a, final_valid_nll)));
    out.push_back({s.name(), init, gaps});
    bars["cols"].push_back(s.name());
    pts.push_back(band_point(double(i), gaps));
  }
  bars["series"].push_back({{"label", "median over seeds"}, {"points", pts}});
  r.plot(bars);
  return out;
}

Claim e8() {
  Claim c;
  c.info = {"E8", "embedding",
            "Initialising the embedding with std 1/sqrt(d_model) and not scaling replaces the explicit scale.",
            "The explicit scale (E ~ N(0,1/d), ×sqrt(d), as t2t/fairseq) against the scale folded into "
            "the init (E ~ N(0,1), ×1: the same effective embedding at step 0): logits at init, and "
            "paired training runs under Adam and SGD, with untied and tied output embeddings.",
            "Two parts per setting: equal at init when max |Δ logits| / max |logits| <= 1e-5 on every seed; "
            "equivalent in training when, on every paired seed, the training loss at 5 points of the curve "
            "and the final valid loss differ by <= 2 %. The verdict names the settings where both hold."};
  c.plan = [](ClaimRun& r) {
    const LedgerMode& m = r.mode();
    const Json tree = training_tree(m);
    for (const Setting& s : kSettings) {
      std::vector<std::string> a = s.overrides(), b = s.overrides();
      a.insert(a.end(), {"model.embedding.init=\"normal_inv_d\"", "model.embedding.scale=\"sqrt_d\""});
      b.insert(b.end(), {"model.embedding.init=\"normal\"", "model.embedding.scale=1"});
      r.add_arm("explicit ×sqrt(d), " + s.name(), RunKind::train, arm_config(tree, a), m.seeds(m.train_seeds), observe(m));
      r.add_arm("folded into init, " + s.name(), RunKind::train, arm_config(tree, b), m.seeds(m.train_seeds), observe(m));
    }
    r.threshold("init_equal_rel", criteria::kInitEqualRel);
    r.threshold("train_equal_rel", criteria::kTrainEqualRel);
  };
  c.evaluate = [](ClaimRun& r) {
    const auto eq = equivalences(r, "explicit ×sqrt(d)", "folded into init");
    plot_loss_curves(r, "E8-loss", "Adam, untied: explicit scale vs folded into the init",
                {"explicit ×sqrt(d), Adam, untied", "folded into init, Adam, untied"});
    for (const auto& e : eq) r.fact("train_gap_" + e.setting, median_of(e.train_gap));
    r.key_number("largest loss gap, Adam untied", median_of(eq[0].train_gap));
    return criteria::reparametrisation(eq, "Folding ×sqrt(d) into the embedding init");
  };
  return c;
}

// ---- E9 -------------------------------------------------------------------------------------

Claim e9() {
  Claim c;
  c.info = {"E9", "embedding",
            "An embedding LayerNorm (BERT style) absorbs the scale, so none is needed.",
            "With the embedding LayerNorm on: the encoder's layer-0 input at init and training runs for "
            "scale 1 vs sqrt(d), with sinusoidal positions added before the norm and with RoPE "
            "(nothing added); and the same scales without the LayerNorm for reference.",
            "Two parts per position setting, on every seed: at init the layer-0 input changes by <= 1e-3 "
            "(relative; a norm removes a scale only up to its eps); in training the paired losses (5 "
            "curve points and the final valid loss) differ by <= 2 %."};
  c.plan = [](ClaimRun& r) {
    const LedgerMode& m = r.mode();
    const Json tree = training_tree(m);
    for (const char* pos : {"sinusoidal", "rope"})
      for (const char* scale : {"1", "sqrt_d"})
        r.add_arm(std::string("LayerNorm, ") + pos + ", ×" + scale, RunKind::train,
                  arm_config(tree, {"model.embedding.layernorm=true", std::string("model.positions=\"") + pos + "\"",
                                    std::string("model.embedding.scale=\"") + scale + "\""}),
                  m.seeds(m.train_seeds), observe(m));
    for (const char* scale : {"1", "sqrt_d"})
      r.add_arm(std::string("no LayerNorm, sinusoidal, ×") + scale, RunKind::train,
                arm_config(tree, {std::string("model.embedding.scale=\"") + scale + "\""}), m.seeds(m.train_seeds), observe(m));
    r.threshold("absorbed_rel", criteria::kAbsorbedRel);
    r.threshold("train_equal_rel", criteria::kTrainEqualRel);
  };
  c.evaluate = [](ClaimRun& r) {
    std::vector<criteria::Absorption> cases;
    for (const char* pos : {"sinusoidal", "rope"}) {
      const Arm& a = r.arm(std::string("LayerNorm, ") + pos + ", ×1");
      const Arm& b = r.arm(std::string("LayerNorm, ") + pos + ", ×sqrt_d");
      const std::vector<double> init = init_differences(r, a, b, 32, InitTensor::encoder_input);
      const std::vector<double> gaps = run_gaps(b, a);
      r.measure("layer-0 input |Δ| / max, ×1 vs ×sqrt(d)", pos, nullptr, "", init);
      r.measure("largest loss gap over the curve and the end, ×1 vs ×sqrt(d)", pos, nullptr, "", gaps);
      cases.push_back({std::string(pos) == "rope" ? "positions are RoPE (nothing added before the norm)"
                                                 : "sinusoidal positions are added before the norm",
                       init, gaps});
      r.fact(std::string("init_diff_") + pos, spread_of(init).max);
    }
    for (const Arm& a : r.arms()) record_final(r, a.name);
    plot_loss_curves(r, "E9-loss", "Training loss with and without the embedding LayerNorm (sinusoidal positions)",
                {"LayerNorm, sinusoidal, ×1", "LayerNorm, sinusoidal, ×sqrt_d", "no LayerNorm, sinusoidal, ×1",
                 "no LayerNorm, sinusoidal, ×sqrt_d"});
    r.key_number("layer-0 input change ×1 vs ×sqrt(d), sinusoidal + LayerNorm", spread_of(cases[0].init_rel_diff).max);
    return criteria::layernorm_absorbs(cases);
  };
  return c;
}

// ---- E10 ------------------------------------------------------------------------------------

Claim e10() {
  Claim c;
  c.info = {"E10", "embedding",
            "In a 6-layer Transformer, removing ×sqrt(d_model) makes the loss oscillate, and with it the "
            "gradient norm drops from 100+ to about 10.",
            "6+6-layer Post-LN encoder-decoder (quick: 2+2) on G2P, N(0,1) embeddings (the seed's "
            "premise), ×sqrt(d) vs ×1, paired seeds, no clipping: the global gradient norm over "
            "training and the roughness of the loss curve (mean |second difference| / mean level).",
            "Two parts, each on every paired seed, each arm at its own best learning rate: the median "
            "gradient norm with / without >= 3, and the loss roughness without / with >= 1.5. A part "
            "that fails fails the claim."};
  c.plan = [](ClaimRun& r) {
    const LedgerMode& m = r.mode();
    const std::string layers = m.quick ? "2" : "6";
    const Json tree = training_tree(m);
    for (const char* scale : {"sqrt_d", "1"})
      r.add_arm(std::string("×") + scale, RunKind::train,
                arm_config(tree, {"model.encoder_layers=" + layers, "model.decoder_layers=" + layers,
                                  "model.embedding.init=\"normal\"", std::string("model.embedding.scale=\"") + scale + "\""}),
                m.seeds(m.train_seeds), observe(m));
    r.threshold("grad_ratio", criteria::kGradRatio);
    r.threshold("roughness_ratio", criteria::kRoughnessRatio);
  };
  c.evaluate = [](ClaimRun& r) {
    const Arm& s = r.arm("×sqrt_d");
    const Arm& u = r.arm("×1");
    std::vector<double> gs, gu, rs, ru, gratio, rratio;
    for (size_t k = 0; k < s.seeds.size(); ++k) {
      std::vector<double> a, b;
      for (const auto& p : grad_norm_curve(s.results[k])) a.push_back(p.second);
      for (const auto& p : grad_norm_curve(u.results[k])) b.push_back(p.second);
      if (diverged(s.results[k])) a = {NAN};  // a failed run's gradient norms rank as its worst
      if (diverged(u.results[k])) b = {NAN};
      gs.push_back(median_of(a));
      gu.push_back(median_of(b));
      gratio.push_back(gs.back() / gu.back());
      rs.push_back(roughness(loss_curve(s.results[k])));
      ru.push_back(roughness(loss_curve(u.results[k])));
      rratio.push_back(ru.back() / rs.back());
    }
    r.measure("median gradient norm over training", "×sqrt_d", nullptr, "", gs);
    r.measure("median gradient norm over training", "×1", nullptr, "", gu);
    r.measure("loss roughness", "×sqrt_d", nullptr, "", rs);
    r.measure("loss roughness", "×1", nullptr, "", ru);
    const double g = r.measure("grad norm ratio with / without", "paired", nullptr, "", gratio).median;
    r.measure("roughness ratio without / with", "paired", nullptr, "", rratio);
    record_final(r, "×sqrt_d");
    record_final(r, "×1");
    plot_loss_curves(r, "E10-loss", "Training loss, 6-layer Post-LN, N(0,1) embeddings", {"×sqrt_d", "×1"});
    Json p = line_plot("E10-grad", "Global gradient norm (before clipping)", "training step", "‖g‖₂", false, true);
    p["series"] = {curve_series("×sqrt_d", s, grad_norm_curve), curve_series("×1", u, grad_norm_curve)};
    r.plot(p);
    r.fact("grad_norm_scaled", median_of(gs));
    r.fact("grad_norm_unscaled", median_of(gu));
    r.key_number("grad norm ratio with / without ×sqrt(d)", g);
    const int64_t layers = s.config["model"]["encoder_layers"].get<int64_t>();
    return criteria::removal_oscillates(std::to_string(layers) + "+" + std::to_string(layers) +
                                            "-layer Post-LN, N(0, 1) embeddings", gratio, rratio);
  };
  return c;
}

// ---- E11 ------------------------------------------------------------------------------------

Claim e11() {
  Claim c;
  c.info = {"E11", "embedding",
            "With RoPE nothing is added to the embedding; LLaMA-style models do not scale it and control "
            "the scale by initialisation instead.",
            "LLaMA-style model (preset llama: RoPE, Pre-RMSNorm, N(0, 0.02²) embeddings; kept "
            "encoder-decoder at the ledger's size, the preset's Pre-norm restored over the base's Post-LN): Var of the first self-attention's logits at init "
            "for embedding scales 1/d, 1, sqrt(d); and training with scales 1 and sqrt(d).",
            "Two parts: at init, per scale, invariant when the logit variance changes by <= 1 % against "
            "scale 1 on every seed (each case names its (s·σ)² beside the norm's eps); in training, ×sqrt(d) "
            "and ×1 give the same losses (5 curve points and the end within 2 % on every paired seed)."};
  c.plan = [](ClaimRun& r) {
    const LedgerMode& m = r.mode();
    const Json tree = training_tree(m);
    for (const char* scale : {"inv_d", "1", "sqrt_d"})
      r.add_arm(std::string("init, ×") + scale, RunKind::probe,
                arm_config(tree, {"model.norm=\"pre\"", std::string("model.embedding.scale=\"") + scale + "\""}, "llama"),
                m.seeds(m.init_seeds), {{"batches", 1}, {"batch_size", 64}});
    for (const char* scale : {"1", "sqrt_d"})
      r.add_arm(std::string("train, ×") + scale, RunKind::train,
                arm_config(tree, {"model.norm=\"pre\"", std::string("model.embedding.scale=\"") + scale + "\""}, "llama"),
                m.seeds(m.train_seeds), observe(m));
    r.threshold("invariant_rel", criteria::kInvariantRel);
  };
  c.evaluate = [](ClaimRun& r) {
    auto var = [&](const std::string& scale) {
      return per_seed(r.arm("init, ×" + scale), [](const Json& res) {
        return probe_value(res, "attn_logits", "encoder", 0, "self_attn", "var");
      });
    };
    const auto base = var("1");
    const double d = r.arm("init, ×1").config["model"]["d_model"].get<double>();
    const double sigma = r.arm("init, ×1").config["model"]["embedding"]["init_std"].get<double>();
    const double eps = r.arm("init, ×1").config["model"]["norm_eps"].get<double>();
    std::vector<criteria::ScaleCase> cases;
    Json bars = {{"id", "E11-variance"}, {"title", "Var(logits) of layer 0 at init, relative to scale 1, median over seeds"},
                 {"kind", "bars"}, {"x_label", "embedding scale"}, {"y_label", "Var / Var(scale 1)"},
                 {"cols", Json::array()}, {"series", Json::array()}};
    Json pts = Json::array();
    int i = 0;
    for (const char* scale : {"inv_d", "1", "sqrt_d"}) {
      const auto v = var(scale);
      std::vector<double> rel;
      for (size_t k = 0; k < v.size(); ++k) rel.push_back(v[k] / base[k]);
      const Spread sp = r.measure("Var(logits) / Var at ×1", std::string("init, ×") + scale, nullptr, "", rel);
      const double sv = std::string(scale) == "inv_d" ? 1.0 / d : std::string(scale) == "1" ? 1.0 : std::sqrt(d);
      const std::string words = std::string(scale) == "inv_d" ? "1/d" : std::string(scale) == "1" ? "1" : "sqrt(d)";
      // The (s·σ)² entering the norm beside its eps: the measured input the condition is about.
      if (std::string(scale) != "1")
        cases.push_back({"s = " + words + " ((s·σ)² = " + fmt(sv * sigma * sv * sigma) + ", norm eps " + fmt(eps) + ")", rel});
      r.fact(std::string("rel_change_") + scale, std::abs(sp.median - 1.0));
      r.fact(std::string("input_mean_square_") + scale, sv * sigma * sv * sigma);
      bars["cols"].push_back(words);
      pts.push_back(band_point(i++, rel));
    }
    bars["series"].push_back({{"label", "median over seeds"}, {"points", pts}});
    r.plot(bars);
    record_final(r, "train, ×1");
    record_final(r, "train, ×sqrt_d");
    const std::vector<double> gaps = run_gaps(r.arm("train, ×sqrt_d"), r.arm("train, ×1"));
    r.measure("largest loss gap over the curve and the end, ×sqrt(d) vs ×1", "paired", nullptr, "", gaps);
    plot_loss_curves(r, "E11-loss", "Training loss, LLaMA-style (RoPE, Pre-RMSNorm)", {"train, ×1", "train, ×sqrt_d"});
    r.fact("final_scale_1", median_final(r.arm("train, ×1")));
    r.fact("final_scale_sqrt_d", median_final(r.arm("train, ×sqrt_d")));
    r.key_number("logit variance change at s = 1/d", std::abs(median_of(cases[0].var_ratio) - 1.0));
    return criteria::rope_rmsnorm_invariance(cases, "s = sqrt(d) against s = 1", gaps);
  };
  return c;
}

// ---- E12 ------------------------------------------------------------------------------------

Claim e12() {
  Claim c;
  c.info = {"E12", "embedding",
            "Multiplying by d_model instead gives variance d_model² and explodes; dividing by d_model "
            "loses the token information.",
            "Training with N(0,1/d) embeddings (t2t's init) at scales sqrt(d) (baseline), d and 1/d, "
            "paired seeds; the token/PE variance ratio of each at init (the E3 table).",
            "Two parts, one per clause: ×d explodes and ÷d loses the information, each \"broken\" when on "
            "every paired seed it diverges or its final valid loss is >= 1.5x the baseline's (each arm at "
            "its own best learning rate)."};
  c.plan = [](ClaimRun& r) {
    const LedgerMode& m = r.mode();
    const Json tree = training_tree(m);
    for (const char* scale : {"sqrt_d", "d", "inv_d"})
      r.add_arm(std::string("×") + scale, RunKind::train,
                arm_config(tree, {std::string("model.embedding.scale=\"") + scale + "\""}), m.seeds(m.train_seeds), observe(m));
    r.threshold("broken_factor", criteria::kBrokenFactor);
  };
  c.evaluate = [](ClaimRun& r) {
    for (const char* a : {"×sqrt_d", "×d", "×inv_d"}) record_final(r, a);
    const criteria::PairedRuns times_d = paired_finals(r.arm("×d"), r.arm("×sqrt_d"));
    const criteria::PairedRuns over_d = paired_finals(r.arm("×inv_d"), r.arm("×sqrt_d"));
    const Spread td = r.measure("final loss over ×sqrt(d)", "×d", nullptr, "", criteria::paired_ratios(times_d));
    const Spread od = r.measure("final loss over ×sqrt(d)", "×inv_d", nullptr, "", criteria::paired_ratios(over_d));
    plot_loss_curves(r, "E12-loss", "Training loss at embedding scales sqrt(d), d, 1/d (N(0,1/d) init)",
                {"×sqrt_d", "×d", "×inv_d"});
    r.fact("ratio_times_d", td.median);
    r.fact("ratio_over_d", od.median);
    r.key_number("final loss ×d / ×sqrt(d)", td.median);
    return criteria::extreme_scales(times_d, over_d);
  };
  return c;
}

}  // namespace

std::vector<Claim> embedding_training_claims() { return {e7(), e8(), e9(), e10(), e11(), e12()}; }

}  // namespace scalelab::ledger
