// Claims B1–B4: the questions the best references ask beyond the seeds.
#include <cmath>

#include "scalelab/ledger/claim_groups.hpp"
#include "scalelab/ledger/criteria.hpp"
#include "scalelab/ledger/experiments.hpp"

namespace scalelab::ledger {
namespace {



// ---- B1 ---------------------------------------------------------------------------------------

Claim b1() {
  Claim c;
  c.info = {"B1", "beyond",
            "Post-LN needs learning-rate warm-up and Pre-LN does not (Xiong et al. 2020); at init Post-LN's "
            "gradients are largest near the output.",
            "4+4-layer encoder-decoder (quick: 2+2) at a learning rate 2.5x the base, Post-LN and Pre-LN, "
            "with and without warm-up (paired seeds); per-layer gradient norms at step 1.",
            "\"Needs warm-up\" = without it the run diverges or ends >= 1.2x the final valid loss with it. "
            "Holds if Post-LN needs it and Pre-LN does not."};
  c.plan = [](ClaimRun& r) {
    const LedgerMode& m = r.mode();
    const std::string layers = m.quick ? "2" : "4";
    const double lr = training_tree(m)["train"]["lr"].get<double>() * 2.5;
    for (const char* norm : {"post", "pre"})
      for (bool warm : {true, false})
        r.add_arm(std::string(norm) + "-LN, " + (warm ? "warm-up" : "no warm-up"), RunKind::train,
                  arm_config(training_tree(m), {"model.encoder_layers=" + layers, "model.decoder_layers=" + layers,
                                                std::string("model.norm=\"") + norm + "\"", "train.lr=" + std::to_string(lr),
                                                std::string("train.warmup=") + (warm ? (m.quick ? "20" : "100") : "0")}),
                  m.seeds(m.train_seeds), observe(m));
    r.threshold("needs_warmup_factor", criteria::kNeedsWarmup);
  };
  c.evaluate = [](ClaimRun& r) {
    double ratio[2];
    bool div[2];
    int i = 0;
    for (const char* norm : {"post", "pre"}) {
      const std::string w = std::string(norm) + "-LN, warm-up", nw = std::string(norm) + "-LN, no warm-up";
      const double a = record_final(r, w).median, b = record_final(r, nw).median;
      ratio[i] = b / a;
      div[i] = any_diverged(r.arm(nw));
      r.fact(std::string("no_warmup_ratio_") + norm, ratio[i]);
      ++i;
    }
    plot_loss_curves(r, "B1-loss", "Training loss with and without warm-up",
                {"post-LN, warm-up", "post-LN, no warm-up", "pre-LN, warm-up", "pre-LN, no warm-up"});
    const Arm& post = r.arm("post-LN, warm-up");
    const Arm& pre = r.arm("pre-LN, warm-up");
    const int64_t layers = post.config["model"]["decoder_layers"].get<int64_t>();
    Json bars = {{"id", "B1-layers"}, {"title", "Decoder gradient norm per layer at step 1"}, {"kind", "bars"},
                 {"x_label", "decoder layer"}, {"y_label", "‖g‖₂"}, {"log_y", true}, {"cols", Json::array()},
                 {"series", Json::array()}};
    for (int64_t l = 0; l < layers; ++l) bars["cols"].push_back("layer " + std::to_string(l));
    for (const Arm* a : {&post, &pre}) {
      Json pts = Json::array();
      for (int64_t l = 0; l < layers; ++l) {
        const auto g = per_seed(*a, [&](const Json& res) { return observed_grad(res, 1, "decoder", l); });
        r.measure("decoder layer grad norm at step 1", a->name, l, "", g);
        pts.push_back(band_point(double(l), g));
      }
      bars["series"].push_back({{"label", a->name}, {"points", pts}});
    }
    r.plot(bars);
    r.key_number("Post-LN final loss, no warm-up over warm-up", ratio[0]);
    return criteria::warmup_needed(ratio[0], div[0], ratio[1], div[1]);
  };
  return c;
}

// ---- B2 ---------------------------------------------------------------------------------------

Claim b2() {
  Claim c;
  c.info = {"B2", "beyond",
            "At a high learning rate the attention logits grow during training; QK-norm or logit soft-capping bounds them "
            "(Dehghani et al. 2023; Gemma 2).",
            "Base model at 5x the base learning rate, paired seeds: no control, QK-norm (LayerNorm on q and k, "
            "learned gains), tanh soft-cap 50 on the logits; max |logit| of every attention site observed over training.",
            "Growth = max |logit| at the end >= 3x at step 1 (baseline); a control bounds it when its end value "
            "is <= 0.5x the baseline's."};
  c.plan = [](ClaimRun& r) {
    const LedgerMode& m = r.mode();
    const std::string lr = "train.lr=" + std::to_string(training_tree(m)["train"]["lr"].get<double>() * 5);
    r.add_arm("baseline", RunKind::train, arm_config(training_tree(m), {lr}), m.seeds(m.train_seeds), observe(m));
    r.add_arm("QK-norm", RunKind::train, arm_config(training_tree(m), {lr, "model.attention.qk_norm=\"layernorm\""}),
              m.seeds(m.train_seeds), observe(m));
    r.add_arm("soft-cap 50", RunKind::train, arm_config(training_tree(m), {lr, "model.attention.softcap=50.0"}),
              m.seeds(m.train_seeds), observe(m));
    r.threshold("growth", criteria::kGrowth);
    r.threshold("bounded", criteria::kBounded);
  };
  c.evaluate = [](ClaimRun& r) {
    // The largest max |logit| over all attention sites at an observation.
    auto max_logit = [](const Json& res, const Json& obs) {
      double m = 0;
      for (const Json& a : obs["attn"])
        if (a[3].is_number()) m = std::max(m, a[3].get<double>());
      return m;
    };
    auto at = [&](const Json& res, bool last) {
      const Json& obs = res["observations"];
      return obs.empty() ? NAN : max_logit(res, last ? obs.back() : obs.front());
    };
    Json p = line_plot("B2-logits", "Largest |attention logit| over training", "training step", "max |logit|", false, true);
    std::map<std::string, double> end;
    double growth = NAN;
    for (const char* name : {"baseline", "QK-norm", "soft-cap 50"}) {
      const Arm& a = r.arm(name);
      const auto e = per_seed(a, [&](const Json& res) { return at(res, true); });
      end[name] = r.measure("max |logit| at the end", name, nullptr, "", e).median;
      r.measure("max |logit| at step 1", name, nullptr, "", per_seed(a, [&](const Json& res) { return at(res, false); }));
      if (std::string(name) == "baseline") {
        std::vector<double> g;
        for (const Json& res : a.results) g.push_back(at(res, true) / at(res, false));
        growth = r.measure("growth end / step 1", name, nullptr, "", g).median;
      }
      record_final(r, name);
      p["series"].push_back(curve_series(name, a, [&](const Json& res) {
        Curve c;
        for (const Json& o : res["observations"]) c.push_back({o["step"].get<double>(), max_logit(res, o)});
        return c;
      }));
    }
    r.plot(p);
    std::vector<criteria::GrowthCase> controls = {{"QK-norm", end["QK-norm"] / end["baseline"]},
                                                  {"soft-cap 50", end["soft-cap 50"] / end["baseline"]}};
    r.fact("baseline_growth", growth);
    r.fact("baseline_end_max_logit", end["baseline"]);
    r.key_number("baseline max |logit| growth over training", growth);
    return criteria::logit_growth(growth, controls);
  };
  return c;
}

// ---- B3 ---------------------------------------------------------------------------------------

std::vector<int64_t> b3_widths(const LedgerMode& m) { return m.quick ? std::vector<int64_t>{16, 32} : std::vector<int64_t>{32, 64, 128}; }
std::vector<double> b3_lrs(const LedgerMode& m) {
  return m.quick ? std::vector<double>{1e-3, 1e-2} : std::vector<double>{3e-4, 1e-3, 3e-3, 1e-2};
}
std::string b3_arm(const std::string& p, int64_t w, double lr) { return p + ", width " + std::to_string(w) + ", lr " + fmt(lr); }

Claim b3() {
  Claim c;
  c.info = {"B3", "beyond",
            "With muP (1/d_k attention, zero-initialised query and readout, Adam learning rates of hidden and output "
            "matrices ∝ 1/width) the best learning rate stays put as width grows, unlike standard parametrisation "
            "with 1/sqrt(d_k) (Yang et al. 2022, Tensor Programs V).",
            "Width × learning-rate sweep, Pre-LN as the mup preset (d_k fixed at 16, so heads grow with width; 400 steps; quick: 2 widths × 2 lrs): "
            "standard parametrisation against preset mup with train.mup_base_width = the smallest width. "
            "The best learning rate per width is the one with the lowest median final valid loss.",
            "\"Stays put\" = the best learning rate's grid index is the same at every width; \"unlike SP\" = SP's moves "
            "by at least one grid step."};
  c.plan = [](ClaimRun& r) {
    const LedgerMode& m = r.mode();
    const int64_t base = b3_widths(m).front();
    for (const char* p : {"SP", "muP"})
      for (int64_t w : b3_widths(m))
        for (double lr : b3_lrs(m)) {
          std::vector<std::string> o = {"model.d_model=" + std::to_string(w), "model.n_heads=" + std::to_string(w / 16),
                                        "model.d_ff=" + std::to_string(4 * w), "train.lr=" + std::to_string(lr),
                                        m.quick ? "train.steps=150" : "train.steps=400", "model.norm=\"pre\""};
          if (std::string(p) == "muP") o.push_back("train.mup_base_width=" + std::to_string(base));
          r.add_arm(b3_arm(p, w, lr), RunKind::train,
                    arm_config(training_tree(m), o, std::string(p) == "muP" ? "mup" : ""), m.seeds(m.train_seeds));
        }
  };
  c.evaluate = [](ClaimRun& r) {
    const LedgerMode& m = r.mode();
    int64_t shift[2] = {0, 0};
    int pi = 0;
    Json p = line_plot("B3-sweep", "Final valid loss against learning rate, per width", "learning rate", "final valid loss (nats)", true);
    for (const char* param : {"SP", "muP"}) {
      int64_t lo = 1 << 20, hi = -1;
      for (int64_t w : b3_widths(m)) {
        std::vector<std::pair<double, std::vector<double>>> pts;
        double best = INFINITY;
        int64_t best_i = -1, i = 0;
        for (double lr : b3_lrs(m)) {
          const Arm& a = r.arm(b3_arm(param, w, lr));
          const auto f = per_seed(a, final_valid_nll);
          const double med = r.measure("final valid loss", a.name, lr, "nats", f).median;
          const double rank = std::isfinite(med) ? med : INFINITY;
          if (rank < best) best = rank, best_i = i;
          pts.push_back({lr, f});
          ++i;
        }
        r.fact(std::string("best_lr_") + param + "_w" + std::to_string(w), best_i >= 0 ? b3_lrs(m)[best_i] : NAN);
        lo = std::min(lo, best_i), hi = std::max(hi, best_i);
        p["series"].push_back(series(std::string(param) + ", width " + std::to_string(w), pts));
      }
      shift[pi++] = hi - lo;
    }
    r.plot(p);
    r.fact("mup_shift", shift[1]);
    r.fact("sp_shift", shift[0]);
    r.key_number("muP best-lr shift across widths (grid steps)", double(shift[1]));
    return criteria::mup_transfer(shift[1], shift[0]);
  };
  return c;
}

// ---- B4 ---------------------------------------------------------------------------------------

Claim b4() {
  Claim c;
  c.info = {"B4", "beyond",
            "FP16 training needs dynamic loss scaling to match f32 (Micikevicius et al. 2018); where it really "
            "overflows, op by op.",
            "The base model trained in emulated f16 (every tensor stored in f16, f32 master weights) with and "
            "without dynamic loss scaling, against f32, paired seeds; overflow and underflow counts per op.",
            "\"Needs it\" = without loss scaling the final valid loss is >= 5 % above f32 (or it diverges) while "
            "with it it is within 5 %."};
  c.plan = [](ClaimRun& r) {
    const LedgerMode& m = r.mode();
    r.add_arm("f32", RunKind::train, arm_config(training_tree(m), {}), m.seeds(m.train_seeds), observe(m));
    r.add_arm("f16, dynamic loss scaling", RunKind::train,
              arm_config(training_tree(m), {"train.precision=\"f16\"", "train.loss_scale=\"dynamic\""}), m.seeds(m.train_seeds), observe(m));
    r.add_arm("f16, no loss scaling", RunKind::train,
              arm_config(training_tree(m), {"train.precision=\"f16\"", "train.loss_scale=\"none\""}), m.seeds(m.train_seeds), observe(m));
    r.threshold("tolerance", criteria::kFp16Tolerance);
  };
  c.evaluate = [](ClaimRun& r) {
    const double f32 = record_final(r, "f32").median;
    const double scaled = record_final(r, "f16, dynamic loss scaling").median;
    const double none = record_final(r, "f16, no loss scaling").median;
    Json bars = {{"id", "B4-ops"}, {"title", "f16 training: results per op that overflow or underflow (summed over seeds)"},
                 {"kind", "bars"}, {"x_label", "op"}, {"y_label", "count"}, {"log_y", true}, {"cols", Json::array()},
                 {"series", Json::array()}};
    std::vector<std::string> ops;
    for (const char* name : {"f16, dynamic loss scaling", "f16, no loss scaling"})
      for (const Json& res : r.arm(name).results)
        if (res.contains("rounding"))
          for (const auto& [op, v] : res["rounding"].items())
            if (std::find(ops.begin(), ops.end(), op) == ops.end()) ops.push_back(op);
    for (const std::string& op : ops) bars["cols"].push_back(op);
    std::string most_op;
    double most = 0;
    for (const char* name : {"f16, dynamic loss scaling", "f16, no loss scaling"}) {
      for (const char* field : {"overflow", "underflow"}) {
        Json pts = Json::array();
        for (size_t i = 0; i < ops.size(); ++i) {
          double sum = 0;
          for (const Json& res : r.arm(name).results)
            if (res.contains("rounding") && res["rounding"].contains(ops[i])) sum += res["rounding"][ops[i]].value(field, 0.0);
          r.measure(std::string(field) + ": " + ops[i], name, nullptr, "results", {sum});
          pts.push_back({double(i), sum});
          if (std::string(field) == "overflow" && sum > most) most = sum, most_op = ops[i];
        }
        bars["series"].push_back({{"label", std::string(name) + ", " + field}, {"points", pts}});
      }
    }
    r.plot(bars);
    r.measure("skipped steps", "f16, dynamic loss scaling", nullptr, "steps",
              per_seed(r.arm("f16, dynamic loss scaling"), [](const Json& res) { return res.value("skipped_steps", 0.0); }));
    plot_loss_curves(r, "B4-loss", "Training loss: f32 and emulated f16", {"f32", "f16, dynamic loss scaling", "f16, no loss scaling"});
    r.fact("most_overflowing_op", most_op.empty() ? "none" : most_op);
    r.fact("no_scale_rel", none / f32 - 1);
    r.fact("scaled_rel", scaled / f32 - 1);
    r.key_number("f16 without loss scaling, final loss over f32 − 1", none / f32 - 1);
    return criteria::loss_scaling_needed(none / f32 - 1, any_diverged(r.arm("f16, no loss scaling")), scaled / f32 - 1,
                                         any_diverged(r.arm("f16, dynamic loss scaling")));
  };
  return c;
}

}  // namespace

std::vector<Claim> beyond_claims() { return {b1(), b2(), b3(), b4()}; }

}  // namespace scalelab::ledger
