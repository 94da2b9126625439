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
            "4+4-layer encoder-decoder (quick: 2+2), Post-LN and Pre-LN, with and without warm-up (paired "
            "seeds), each arm at its own best learning rate on a grid around 2.5x the base rate (so \"needs "
            "warm-up\" means: no rate without it trains as well as the best rate with it); per-layer "
            "gradient norms at step 1.",
            "Three parts, each on every paired seed: Post-LN needs warm-up (without it the run diverges or "
            "ends >= 1.2x the final valid loss with it); Pre-LN does not (< 1.2x); at step 1 Post-LN's "
            "largest decoder gradient is in its last layer."};
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
    criteria::WarmupRuns runs;
    for (const char* norm : {"post", "pre"}) {
      const std::string w = std::string(norm) + "-LN, warm-up", nw = std::string(norm) + "-LN, no warm-up";
      record_final(r, w);
      record_final(r, nw);
      const criteria::PairedRuns p = paired_finals(r.arm(nw), r.arm(w));
      const Spread ratio = r.measure("final loss without / with warm-up", std::string(norm) + "-LN", nullptr, "", criteria::paired_ratios(p));
      r.fact(std::string("no_warmup_ratio_") + norm, ratio.median);
      r.fact(std::string("best_lr_") + norm + "_no_warmup", r.arm(nw).lr_choice.best);
      r.fact(std::string("best_lr_") + norm + "_warmup", r.arm(w).lr_choice.best);
      (std::string(norm) == "post" ? runs.post : runs.pre) = p;
    }
    plot_loss_curves(r, "B1-loss", "Training loss with and without warm-up, each at its own best learning rate",
                {"post-LN, warm-up", "post-LN, no warm-up", "pre-LN, warm-up", "pre-LN, no warm-up"});
    const Arm& post = r.arm("post-LN, warm-up");
    const Arm& pre = r.arm("pre-LN, warm-up");
    const int64_t layers = post.config["model"]["decoder_layers"].get<int64_t>();
    Json bars = {{"id", "B1-layers"}, {"title", "Decoder gradient norm per layer at step 1, median over seeds"}, {"kind", "bars"},
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
      bars["series"].push_back({{"label", a == &post ? "Post-LN" : "Pre-LN"}, {"points", pts}});
    }
    r.plot(bars);
    // Per seed: is Post-LN's largest decoder gradient at step 1 in its last layer (nearest the output)?
    for (const Json& res : post.results) {
      int64_t arg = -1;
      double best = -1;
      for (int64_t l = 0; l < layers; ++l) {
        const double g = observed_grad(res, 1, "decoder", l);
        if (std::isfinite(g) && g > best) best = g, arg = l;
      }
      runs.post_last_is_largest.push_back(arg < 0 ? NAN : arg == layers - 1 ? 1.0 : 0.0);
    }
    r.key_number("Post-LN final loss, no warm-up over warm-up", median_of(criteria::paired_ratios(runs.post)));
    return criteria::warmup_needed(runs);
  };
  return c;
}

// ---- B2 ---------------------------------------------------------------------------------------

Claim b2() {
  Claim c;
  c.info = {"B2", "beyond",
            "At a high learning rate the attention logits grow during training; QK-norm or logit soft-capping bounds them "
            "(Dehghani et al. 2023; Gemma 2).",
            "Base model at 5x the base learning rate (the claim's premise, so the rates are not tuned), paired "
            "seeds: no control, QK-norm (LayerNorm on q and k, learned gains), tanh soft-cap 50 on the logits; "
            "and no control at 10x. Max |logit| of every attention site observed over training.",
            "Two parts, each on every paired seed: growth (per rate) = max |logit| at the end >= 3x at step 1 "
            "without a control; bounded (per control) = its end value <= 0.5x the 5x baseline's."};
  c.plan = [](ClaimRun& r) {
    const LedgerMode& m = r.mode();
    // The claim's premise is a high learning rate, so these arms keep theirs (not tuned): 5x the
    // base for every arm, and 10x for the baseline, a second case of "high".
    const double base_lr = training_tree(m)["train"]["lr"].get<double>();
    const std::string lr = "train.lr=" + std::to_string(base_lr * 5);
    r.add_arm("baseline", RunKind::train, arm_config(training_tree(m), {lr}), m.seeds(m.train_seeds), observe(m)).tune_lr = false;
    r.add_arm("baseline, 10x", RunKind::train, arm_config(training_tree(m), {"train.lr=" + std::to_string(base_lr * 10)}),
              m.seeds(m.train_seeds), observe(m)).tune_lr = false;
    r.add_arm("QK-norm", RunKind::train, arm_config(training_tree(m), {lr, "model.attention.qk_norm=\"layernorm\""}),
              m.seeds(m.train_seeds), observe(m)).tune_lr = false;
    r.add_arm("soft-cap 50", RunKind::train, arm_config(training_tree(m), {lr, "model.attention.softcap=50.0"}),
              m.seeds(m.train_seeds), observe(m)).tune_lr = false;
    r.threshold("growth", criteria::kGrowth);
    r.threshold("bounded", criteria::kBounded);
  };
  c.evaluate = [](ClaimRun& r) {
    // The largest max |logit| over all attention sites at an observation; a non-finite or missing
    // value (a diverged run, stored as null) is +inf: the run's logits blew up.
    auto max_logit = [](const Json& obs) {
      double m = 0;
      for (const Json& a : obs["attn"]) m = std::max(m, a[3].is_number() ? a[3].get<double>() : INFINITY);
      return m;
    };
    auto at = [&](const Json& res, bool last) {
      const Json& obs = res["observations"];
      return obs.empty() ? NAN : max_logit(last ? obs.back() : obs.front());
    };
    Json p = line_plot("B2-logits", "Largest |attention logit| over training, median over seeds", "training step", "max |logit|", false, true);
    std::map<std::string, std::vector<double>> end;
    std::vector<criteria::GrowthCase> growth;
    for (const char* name : {"baseline", "baseline, 10x", "QK-norm", "soft-cap 50"}) {
      const Arm& a = r.arm(name);
      end[name] = per_seed(a, [&](const Json& res) { return at(res, true); });
      r.measure("max |logit| at the end", name, nullptr, "", end[name]);
      r.measure("max |logit| at step 1", name, nullptr, "", per_seed(a, [&](const Json& res) { return at(res, false); }));
      if (std::string(name).rfind("baseline", 0) == 0) {
        std::vector<double> g;
        for (const Json& res : a.results) g.push_back(at(res, true) / at(res, false));
        r.measure("growth end / step 1", name, nullptr, "", g);
        growth.push_back({std::string("lr = ") + (std::string(name) == "baseline" ? "5x" : "10x") + " the base", g});
      }
      record_final(r, name);
      p["series"].push_back(curve_series(name, a, [&](const Json& res) {
        Curve c;
        for (const Json& o : res["observations"]) c.push_back({o["step"].get<double>(), max_logit(o)});
        return c;
      }));
    }
    r.plot(p);
    std::vector<criteria::BoundCase> controls;
    for (const char* name : {"QK-norm", "soft-cap 50"}) {
      std::vector<double> ratio;
      for (size_t k = 0; k < end[name].size(); ++k)
        ratio.push_back(std::isfinite(end["baseline"][k]) ? end[name][k] / end["baseline"][k] : NAN);
      r.measure("end max |logit| over the baseline's", name, nullptr, "", ratio);
      controls.push_back({name, ratio});
    }
    r.fact("baseline_growth", median_of(growth[0].growth));
    r.fact("baseline_end_max_logit", median_of(end["baseline"]));
    r.key_number("baseline max |logit| growth over training (5x lr)", median_of(growth[0].growth));
    return criteria::logit_growth(growth, controls);
  };
  return c;
}

// ---- B3 ---------------------------------------------------------------------------------------

std::vector<int64_t> b3_widths(const LedgerMode& m) { return m.quick ? std::vector<int64_t>{16, 32} : std::vector<int64_t>{32, 64, 128}; }

// Two ways to grow the width: with d_k fixed, 1/d_k and 1/sqrt(d_k) differ only by a constant, so
// muP's attention scale cannot matter; with the heads fixed, d_k grows with the width and it can.
struct B3Setting {
  std::string name;  // the case's condition
  bool fixed_dk;
  int64_t heads(int64_t width) const { return fixed_dk ? width / 16 : 2; }
};
const std::vector<B3Setting> kB3Settings = {{"d_k fixed at 16 (heads grow with width)", true},
                                            {"heads fixed at 2 (d_k grows with width)", false}};
std::string b3_arm(const std::string& p, const B3Setting& s, int64_t w) {
  return p + ", " + (s.fixed_dk ? "d_k 16" : "2 heads") + ", width " + std::to_string(w);
}

Claim b3() {
  Claim c;
  c.info = {"B3", "beyond",
            "With muP (1/d_k attention, zero-initialised query and readout, Adam learning rates of hidden and output "
            "matrices ∝ 1/width) the best learning rate stays put as width grows, unlike standard parametrisation "
            "with 1/sqrt(d_k) (Yang et al. 2022, Tensor Programs V).",
            "Width × learning-rate sweep, Pre-LN as the mup preset (400 steps; quick: 150 steps, 2 widths): standard "
            "parametrisation against preset mup with train.mup_base_width = the smallest width, with d_k fixed at 16 "
            "(heads grow) and with 2 heads (d_k grows). Each (parametrisation, width) trains every seed on a x2 grid "
            "of rates around 3e-3; the best rate has the lowest median final valid loss (a failed seed ranks worst); "
            "a best rate on the grid's edge grows the grid, up to 3 steps.",
            "\"Stays put\" = muP's best rates span at most one x2 step across the widths; \"unlike SP\" = SP's span "
            ">= 2 steps. Per setting; a best rate still on the grid's edge leaves that setting undecided."};
  c.plan = [](ClaimRun& r) {
    const LedgerMode& m = r.mode();
    const int64_t base = b3_widths(m).front();
    r.learning_rate_is_the_subject();
    for (const B3Setting& s : kB3Settings)
      for (const char* p : {"SP", "muP"})
        for (int64_t w : b3_widths(m)) {
          std::vector<std::string> o = {"model.d_model=" + std::to_string(w), "model.n_heads=" + std::to_string(s.heads(w)),
                                        "model.d_ff=" + std::to_string(4 * w), "train.lr=0.003",
                                        m.quick ? "train.steps=150" : "train.steps=400", "model.norm=\"pre\""};
          if (std::string(p) == "muP") o.push_back("train.mup_base_width=" + std::to_string(base));
          Arm& a = r.add_arm(b3_arm(p, s, w), RunKind::train,
                             arm_config(training_tree(m), o, std::string(p) == "muP" ? "mup" : ""), m.seeds(m.train_seeds));
          a.lr_rank_all_seeds = true;  // the best rate is the measurement: every seed at every rate
        }
    r.threshold("stays_put_steps", criteria::kStaysPutSteps);
    r.threshold("moves_steps", criteria::kMovesSteps);
  };
  c.evaluate = [](ClaimRun& r) {
    const LedgerMode& m = r.mode();
    std::vector<criteria::TransferCase> cases;
    for (const B3Setting& s : kB3Settings) {
      criteria::TransferCase tc{s.name, {}, {}, true};
      Json p = line_plot(std::string("B3-sweep-") + (s.fixed_dk ? "fixed-dk" : "growing-dk"),
                         "Final valid loss against learning rate, " + s.name + ", median over seeds", "learning rate",
                         "final valid loss (nats)", true);
      for (const char* param : {"SP", "muP"}) {
        for (int64_t w : b3_widths(m)) {
          const Arm& a = r.arm(b3_arm(param, s, w));
          std::vector<std::pair<double, std::vector<double>>> pts;
          for (double lr : a.grid) {
            std::vector<double> f;
            for (const Json& res : a.by_lr.at(lr)) f.push_back(final_valid_nll(res));
            r.measure("final valid loss", a.name, lr, "nats", f);
            pts.push_back({lr, f});
          }
          (std::string(param) == "SP" ? tc.sp_best_lr : tc.mup_best_lr).push_back(a.lr_choice.best);
          tc.interior = tc.interior && a.lr_choice.interior;
          r.fact("best_lr_" + a.name, a.lr_choice.best);
          p["series"].push_back(series(std::string(param) + ", width " + std::to_string(w), pts));
        }
      }
      r.plot(p);
      r.fact(std::string("mup_span_") + (s.fixed_dk ? "fixed_dk" : "growing_dk"), criteria::lr_span_steps(tc.mup_best_lr));
      r.fact(std::string("sp_span_") + (s.fixed_dk ? "fixed_dk" : "growing_dk"), criteria::lr_span_steps(tc.sp_best_lr));
      cases.push_back(tc);
    }
    r.key_number("muP best-rate span across widths, d_k growing (x2 steps)", criteria::lr_span_steps(cases.back().mup_best_lr));
    return criteria::mup_transfer(cases);
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
            "Two parts, each on every paired seed, each arm at its own best learning rate: without loss "
            "scaling the final valid loss is >= 5 % above f32's (or it diverges); with dynamic loss scaling "
            "it is within 5 %. The op-by-op counts are reported, not judged."};
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
    record_final(r, "f32");
    record_final(r, "f16, dynamic loss scaling");
    record_final(r, "f16, no loss scaling");
    const criteria::PairedRuns none = paired_finals(r.arm("f16, no loss scaling"), r.arm("f32"));
    const criteria::PairedRuns scaled = paired_finals(r.arm("f16, dynamic loss scaling"), r.arm("f32"));
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
    const double none_rel = median_of(criteria::paired_ratios(none)) - 1, scaled_rel = median_of(criteria::paired_ratios(scaled)) - 1;
    r.fact("no_scale_rel", none_rel);
    r.fact("scaled_rel", scaled_rel);
    r.key_number("f16 without loss scaling, final loss over f32 − 1", none_rel);
    return criteria::loss_scaling_needed("the base model", none, scaled);
  };
  return c;
}

}  // namespace

std::vector<Claim> beyond_claims() { return {b1(), b2(), b3(), b4()}; }

}  // namespace scalelab::ledger
