// Claims A1, A2, A5, A9, A10, A13 (seed 002): the attention scale at the level of the math and
// the kernels (Monte Carlo, exact evaluation, emulated formats) and of the model at init.
#include <cmath>
#include <iterator>
#include <limits>

#include "scalelab/core/rng.hpp"
#include "scalelab/kernels/attention.hpp"
#include "scalelab/kernels/attention_emulated.hpp"
#include "scalelab/ledger/claim_groups.hpp"
#include "scalelab/ledger/criteria.hpp"
#include "scalelab/ledger/experiments.hpp"
#include "scalelab/probes/softmax_stats.hpp"

namespace scalelab::ledger {
namespace {

std::vector<float> normals(int64_t n, double std, Rng& rng) {
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = static_cast<float>(std * rng.normal());
  return v;
}

// The model probe arm shared by A1 and A2: the training base config at init.
void plan_model_probe(ClaimRun& r) {
  const LedgerMode& m = r.mode();
  r.add_arm("model at init", RunKind::probe, arm_config(training_tree(m), {}), m.seeds(m.init_seeds),
            {{"batches", 1}, {"batch_size", 64}});
}

// ---- A1 -------------------------------------------------------------------------------------

const std::vector<int64_t> kA1Widths = {1, 4, 16, 64, 256};  // d_k of the Monte Carlo

Claim a1() {
  Claim c;
  c.info = {"A1", "attention",
            "If q and k have iid components of mean 0 and variance 1, Var(q·k) = d_k.",
            "Monte Carlo over pairs of iid N(0,1) vectors for several d_k; then the variance of the "
            "real q and k entries of the first encoder self-attention at init (the ledger's base model: "
            "N(0,1/d)·sqrt(d) embeddings, Xavier projections).",
            "Two parts. The closed form: each d_k is a case, holding when the Monte Carlo Var(q·k)/d_k "
            "is within 5 standard errors of 1 (relative SE sqrt((2 + 6/d_k)/n) for n pairs). The "
            "premise in the model: Var(q_i) and Var(k_i) of the model at init within 2x of 1 on every "
            "seed. The claim holds when both parts do (verdict.hpp, from_parts)."};
  c.plan = [](ClaimRun& r) {
    const LedgerMode& m = r.mode();
    r.add_computed_arm("monte carlo", {{"d_k", kA1Widths}, {"pairs", m.quick ? 5000 : 20000}},
                       m.seeds(m.init_seeds));
    plan_model_probe(r);
    r.threshold("sigmas", criteria::kMonteCarloSigmas);
  };
  c.evaluate = [](ClaimRun& r) {
    const LedgerMode& m = r.mode();
    const int64_t pairs = m.quick ? 5000 : 20000;
    std::vector<double> ratios, rel_se;
    std::vector<std::string> conditions;
    std::vector<std::pair<double, std::vector<double>>> pts;
    std::vector<std::string> required;
    for (int64_t dk : kA1Widths) required.push_back("d_k " + std::to_string(dk));
    const ComputedValues v = r.computed("monte carlo", r.computed_arm_inputs("monte carlo"), required, [&] {
      ComputedValues out;
      for (int64_t dk : kA1Widths) {
        std::vector<double> per;
        for (int64_t seed : m.seeds(m.init_seeds)) {
          Rng rng(static_cast<uint64_t>(seed) * 104729u + static_cast<uint64_t>(dk));
          double sum = 0, sq = 0;
          for (int64_t i = 0; i < pairs; ++i) {
            double dot = 0;
            for (int64_t j = 0; j < dk; ++j) dot += rng.normal() * rng.normal();
            sum += dot, sq += dot * dot;
          }
          const double mean = sum / double(pairs);
          per.push_back((sq / double(pairs) - mean * mean) / double(dk));
        }
        out.set("d_k " + std::to_string(dk), per);
      }
      return out;
    });
    for (int64_t dk : kA1Widths) {
      conditions.push_back("d_k = " + std::to_string(dk));
      const std::vector<double>& per = v.at("d_k " + std::to_string(dk));
      r.measure("Var(q·k)/d_k", "monte carlo", dk, "", per);
      double mean = 0;
      for (double x : per) mean += x / double(per.size());
      ratios.push_back(mean);
      rel_se.push_back(std::sqrt((2.0 + 6.0 / double(dk)) / double(pairs * int64_t(per.size()))));
      pts.push_back({double(dk), per});
    }
    Json p = line_plot("A1-variance", "Var(q·k)/d_k for iid N(0,1) components (Monte Carlo)", "d_k", "Var(q·k) / d_k", true);
    p["series"].push_back(series("Monte Carlo", pts));
    r.plot(p);
    const Arm& model = r.arm("model at init");
    const auto qv = per_seed(model, [](const Json& res) { return probe_value(res, "attn_qk", "encoder", 0, "self_attn", "q_var"); });
    const auto kv = per_seed(model, [](const Json& res) { return probe_value(res, "attn_qk", "encoder", 0, "self_attn", "k_var"); });
    const double q = r.measure("Var(q_i)", model.name, nullptr, "", qv).median;
    const double k = r.measure("Var(k_i)", model.name, nullptr, "", kv).median;
    r.fact("model_q_var", q);
    r.fact("model_k_var", k);
    r.key_number("Var(q_i) in the model at init (premise: 1)", q);
    return from_parts(
        {Part{"closed form", "Var(q·k) = d_k for iid mean-0, variance-1 components",
              criteria::matches_closed_form(ratios, rel_se, "Var(q·k)/d_k", conditions), conditions},
         Part{"premise in the model", "the model's q and k entries at init have the premise's unit variance",
              criteria::unit_variance_premise(
                  {{"the model at init (N(0,1/d)·sqrt(d) embeddings, Xavier projections)", qv, kv}}),
              {model.name}}});
  };
  return c;
}

// ---- A2 -------------------------------------------------------------------------------------

Claim a2() {
  Claim c;
  c.info = {"A2", "attention",
            "Dividing by sqrt(d_k) gives unit-variance logits, almost all within [-3, 3].",
            "Share of logits within [-3, 3]: synthetic (iid N(0,1) q, k, d_k 64, scaled by "
            "1/sqrt(d_k)); the first encoder self-attention of the base model at init (probe) and "
            "at the end of training (observed at the last step).",
            "Each of the three is a case, judged on every seed by two parts: \"unit variance\" = "
            "Var(scaled logits) within 2x of 1; \"almost all\" = share >= 99 %. Holds on the cases "
            "where both parts hold (verdict.hpp, from_parts)."};
  c.plan = [](ClaimRun& r) {
    const LedgerMode& m = r.mode();
    r.add_computed_arm("synthetic", {{"d_k", 64}, {"pairs", 20000}}, m.seeds(m.init_seeds));
    plan_model_probe(r);
    r.add_arm("trained", RunKind::train, arm_config(training_tree(m), {}), m.seeds(m.train_seeds), observe(m));
    r.threshold("within_share", criteria::kWithinShare);
  };
  c.evaluate = [](ClaimRun& r) {
    const LedgerMode& m = r.mode();
    const ComputedValues v = r.computed("synthetic", r.computed_arm_inputs("synthetic"), {"within", "var"}, [&] {
      std::vector<double> within, var;
      for (int64_t seed : m.seeds(m.init_seeds)) {
        Rng rng(static_cast<uint64_t>(seed) * 15485863u);
        int64_t in = 0;
        double sum = 0, sq = 0;
        for (int64_t i = 0; i < 20000; ++i) {
          double dot = 0;
          for (int j = 0; j < 64; ++j) dot += rng.normal() * rng.normal();
          in += std::abs(dot / 8.0) <= 3.0;
          sum += dot / 8.0, sq += (dot / 8.0) * (dot / 8.0);
        }
        within.push_back(double(in) / 20000.0);
        var.push_back(sq / 20000.0 - (sum / 20000.0) * (sum / 20000.0));
      }
      ComputedValues out;
      out.set("within", within);
      out.set("var", var);
      return out;
    });
    const std::vector<double>& synth = v.at("within");
    const std::vector<double>& synth_var = v.at("var");
    const Arm& model = r.arm("model at init");
    const auto init = per_seed(model, [](const Json& res) {
      return probe_value(res, "attn_logits", "encoder", 0, "self_attn", "within_share");
    });
    const auto init_var = per_seed(model, [](const Json& res) {
      return probe_value(res, "attn_logits", "encoder", 0, "self_attn", "var");
    });
    const Arm& trained = r.arm("trained");
    const int64_t last = trained.config["train"]["steps"].get<int64_t>();
    const auto after = per_seed(trained, [&](const Json& res) { return observed_attn(res, last, "encoder", 0, "self_attn", 7); });
    const auto after_var = per_seed(trained, [&](const Json& res) { return observed_attn(res, last, "encoder", 0, "self_attn", 6); });
    std::vector<criteria::WithinCase> cases = {
        {"synthetic iid N(0,1) q, k (d_k 64)", synth, synth_var},
        {"the model at init", init, init_var},
        {"the model after training", after, after_var}};
    r.measure("share within [-3, 3]", "synthetic", nullptr, "", synth);
    r.measure("share within [-3, 3]", "model at init", nullptr, "", init);
    r.measure("share within [-3, 3]", "trained", last, "", after);
    r.measure("Var(scaled logits)", "synthetic", nullptr, "", synth_var);
    r.measure("Var(scaled logits)", "model at init", nullptr, "", init_var);
    r.measure("Var(scaled logits)", "trained", last, "", after_var);
    Json bars = {{"id", "A2-within"}, {"title", "Share of scaled logits within [-3, 3]"}, {"kind", "bars"},
                 {"x_label", "where"}, {"y_label", "share"}, {"cols", {"synthetic", "model at init", "after training"}},
                 {"series", {{{"label", "median over seeds"}, {"points", {band_point(0, synth), band_point(1, init), band_point(2, after)}}}}}};
    r.plot(bars);
    r.fact("within_synthetic", median_of(synth));
    r.fact("within_init", median_of(init));
    r.fact("within_trained", median_of(after));
    r.key_number("share within [-3, 3] after training", median_of(after));
    return criteria::logits_within_range(cases);
  };
  return c;
}

// ---- A5 -------------------------------------------------------------------------------------

Claim a5() {
  Claim c;
  c.info = {"A5", "attention",
            "The softmax derivative p(1−p) is near 0 at extreme inputs and about 0.05–0.25 for inputs in [-3, 3].",
            "Exact p(1−p) of every entry of softmax rows whose logits are iid N(0, σ²), for n keys "
            "and spreads σ; mean over entries and rows.",
            "Two parts, each judged on every n and seed. Inputs in [-3, 3]: the mean p(1−p) of "
            "unit-variance rows (σ = 1) in [0.05, 0.25]. Extreme inputs: for σ = 10 (logits about "
            "±30), the mean over rows of the row's largest p(1−p) (the gradient a saturated row "
            "keeps) <= 0.01. Holds on the n where both parts hold."};
  const std::vector<int64_t> ns = {2, 10, 64, 256};
  const std::vector<double> sigmas = {0.5, 1, 3, 10};
  c.plan = [ns, sigmas](ClaimRun& r) {
    r.add_computed_arm("exact rows", {{"n", ns}, {"sigma", sigmas}, {"rows", 2000}}, r.mode().seeds(r.mode().init_seeds));
    r.threshold("pp_lo", criteria::kPpLo);
    r.threshold("pp_hi", criteria::kPpHi);
  };
  c.evaluate = [ns, sigmas](ClaimRun& r) {
    std::vector<criteria::RowCase> cases;
    for (int64_t n : ns) cases.push_back({n, {}, {}});
    Json p = line_plot("A5-pp", "Mean p(1−p) of softmax rows with iid N(0, σ²) logits, median over seeds", "keys per row n",
                       "mean p(1−p)", true, true);
    Json extreme = line_plot("A5-extreme", "Largest p(1−p) of a row, mean over rows, logit std σ, median over seeds",
                             "keys per row n", "mean over rows of max p(1−p)", true, true);
    for (double sigma : sigmas) {
      std::vector<std::pair<double, std::vector<double>>> pts, max_pts;
      for (size_t ni = 0; ni < ns.size(); ++ni) {
        const int64_t n = ns[ni];
        std::vector<double> per, per_max;
        for (int64_t seed : r.mode().seeds(r.mode().init_seeds)) {
          Rng rng(static_cast<uint64_t>(seed) * 31337u + static_cast<uint64_t>(n * 100 + sigma * 10));
          std::vector<double> s(static_cast<size_t>(n));
          double total = 0, total_max = 0;
          for (int row = 0; row < 2000; ++row) {
            double mx = -INFINITY, sum = 0, row_max = 0;
            for (double& x : s) x = sigma * rng.normal(), mx = std::max(mx, x);
            for (double& x : s) x = std::exp(x - mx), sum += x;
            for (double x : s) {
              const double pp = (x / sum) * (1 - x / sum);
              total += pp, row_max = std::max(row_max, pp);
            }
            total_max += row_max;
          }
          per.push_back(total / (2000.0 * double(n)));
          per_max.push_back(total_max / 2000.0);
        }
        r.measure("mean p(1−p), σ = " + fmt(sigma), "exact rows", n, "", per);
        r.measure("mean over rows of max p(1−p), σ = " + fmt(sigma), "exact rows", n, "", per_max);
        if (sigma == 1.0) cases[ni].mean_pp = per, r.fact("pp_n" + std::to_string(n), median_of(per));
        if (sigma == criteria::kExtremeSigma)
          cases[ni].extreme_max_pp = per_max, r.fact("extreme_max_pp_n" + std::to_string(n), median_of(per_max));
        pts.push_back({double(n), per});
        max_pts.push_back({double(n), per_max});
      }
      p["series"].push_back(series("σ = " + fmt(sigma), pts));
      extreme["series"].push_back(series("σ = " + fmt(sigma), max_pts));
    }
    r.plot(p);
    r.plot(extreme);
    r.key_number("mean p(1−p), unit-variance logits, n = 64", median_of(cases[2].mean_pp));
    return criteria::softmax_derivative_range(cases);
  };
  return c;
}

// ---- A9 -------------------------------------------------------------------------------------

struct A9Case {
  DType format;
  ScaleOrder order;
  bool subtract_max;
  std::string name() const {
    return std::string(format == DType::f16 ? "f16" : "bf16") + ", " +
           (order == ScaleOrder::logits_after ? "scale after QKᵀ" : "q pre-scaled") +
           (subtract_max ? ", max subtracted" : ", no max subtraction");
  }
};

std::vector<A9Case> a9_cases() {
  std::vector<A9Case> out;
  for (DType f : {DType::f16, DType::bf16})
    for (ScaleOrder o : {ScaleOrder::logits_after, ScaleOrder::q_before})
      for (bool sm : {true, false}) out.push_back({f, o, sm});
  return out;
}

// Per case (a9_cases), "bad <case>": each seed's overflowing or NaN results over every op, and
// "overflow by op <case>": the overflowing results of each op (PrecisionOp order) over the seeds.
ComputedValues a9_compute(const std::vector<int64_t>& seeds) {
  const AttentionShape shape{.batch = 1, .heads = 4, .q_len = 64, .k_len = 64, .head_dim = 128};
  const int64_t n = shape.heads * 64 * 128;
  // Scaled logits q·k/sqrt(d_k) have variance σ⁴ for q, k ~ N(0, σ²): σ² = 10 gives std 10.
  const double sigma = std::sqrt(10.0);
  ComputedValues v;
  for (const A9Case& k : a9_cases()) {
    std::vector<double> per;
    OverflowCounters total;
    for (int64_t seed : seeds) {
      Rng rng(static_cast<uint64_t>(seed) * 2654435761u);
      const auto q = normals(n, sigma, rng), kk = normals(n, sigma, rng), vv = normals(n, 1.0, rng);
      std::vector<float> out(static_cast<size_t>(n));
      OverflowCounters counters;
      EmulatedAttentionOptions o{.dtype = k.format, .accumulate = DType::f32, .scale_order = k.order,
                                 .subtract_max = k.subtract_max, .scale = 1.0 / std::sqrt(128.0)};
      attention_emulated_forward(shape, o, q.data(), kk.data(), vv.data(), out.data(), counters);
      double bad = 0;
      for (const OpCounts& op : counters.ops) bad += double(op.overflow + op.nan);
      per.push_back(bad);
      total.merge(counters);
    }
    std::vector<double> by_op;
    for (int i = 0; i < kPrecisionOps; ++i) by_op.push_back(double(total.ops[i].overflow));
    v.set("bad " + k.name(), per);
    v.set("overflow by op " + k.name(), by_op);
  }
  return v;
}

Claim a9() {
  Claim c;
  c.info = {"A9", "attention",
            "In FP16/BF16, even scaled logits (range about ±30 at d_k = 128) can overflow and give inf in softmax.",
            "Emulated attention (every op rounded to the format, f32 sums) on q, k with scaled logits of "
            "standard deviation 10 (about ±30), d_k 128, 64 × 64: overflow and NaN counts per op for "
            "the scale after QKᵀ or on q, and softmax with or without max subtraction.",
            "Each configuration (format × scale order × max subtraction) is a case; it holds where "
            "every seed gives an overflowing or NaN result. Holds only if names the configurations "
            "where it does. Title, bars, text and key number all give the median over seeds of the "
            "overflowing or NaN results per seed."};
  c.plan = [](ClaimRun& r) {
    Json cases = Json::array();
    for (const A9Case& k : a9_cases()) cases.push_back(k.name());
    r.add_computed_arm("emulated attention", {{"d_k", 128}, {"q_len", 64}, {"k_len", 64}, {"heads", 4},
                                              {"logit_std", 10}, {"cases", cases}},
                       r.mode().seeds(r.mode().init_seeds));
  };
  c.evaluate = [](ClaimRun& r) {
    std::vector<std::string> required;
    for (const A9Case& k : a9_cases())
      for (const char* what : {"bad ", "overflow by op "}) required.push_back(what + k.name());
    const std::vector<int64_t> seeds = r.mode().seeds(r.mode().init_seeds);
    const ComputedValues v = r.computed("emulated attention", r.computed_arm_inputs("emulated attention"), required,
                                        [&] { return a9_compute(seeds); });
    std::vector<criteria::AttentionOverflow> cases;
    Json bars = {{"id", "A9-overflow"}, {"title", "Overflowing or NaN results per case (all ops), median over seeds"},
                 {"kind", "bars"}, {"x_label", "format, order, softmax"}, {"y_label", "results that overflow or turn NaN"},
                 {"cols", Json::array()}, {"series", Json::array()}};
    Json pts = Json::array();
    std::string first_op;
    double most = -1;
    std::string most_case;
    for (const A9Case& k : a9_cases()) {
      const std::vector<double>& per = v.at("bad " + k.name());
      const std::vector<double>& overflow_by_op = v.at("overflow by op " + k.name());
      const Spread s = r.measure("overflow + NaN results per seed", k.name(), nullptr, "", per);
      cases.push_back({k.name(), per});
      if (s.median > most) most = s.median, most_case = k.name();
      for (size_t i = 0; i < overflow_by_op.size(); ++i)
        if (overflow_by_op[i] > 0 && first_op.empty()) first_op = precision_op_name(static_cast<PrecisionOp>(i));
      bars["cols"].push_back(k.name());
      pts.push_back(band_point(double(bars["cols"].size() - 1), per));
    }
    bars["series"].push_back({{"label", "median over seeds"}, {"points", pts}});
    r.plot(bars);
    r.fact("first_overflow_op", first_op.empty() ? "none" : first_op);
    r.fact("most_overflowing_case", most_case);
    r.key_number("overflowing or NaN results, median over seeds, " + most_case, most);
    return criteria::scaled_logits_overflow(cases);
  };
  return c;
}

// ---- A10 ------------------------------------------------------------------------------------

// Standard deviations of the scaled logits tried: unit variance, and the spreads of A9's range.
constexpr double kA10Spreads[] = {1.0, 10.0, 30.0};
constexpr size_t kA10EmulatedSeeds = 3;

// The name of a series of A10's computed values: what ("flash_error", "naive_error",
// "flash_overflow"), format and logit spread.
std::string a10_series(const std::string& what, const std::string& format, double spread) {
  return what + " " + format + ", logit std " + fmt(spread);
}

constexpr int64_t kA10MemoryLengths[] = {256, 1024, 4096};

// Every seed's error of the flash and naive kernels against a double reference, per format and
// logit spread, and the forward state each kernel saves at kA10MemoryLengths.
ComputedValues a10_compute(const std::vector<int64_t>& all_seeds) {
  const AttentionShape shape{.batch = 1, .heads = 2, .q_len = 256, .k_len = 256, .head_dim = 64};
  const int64_t n = shape.heads * 256 * 64;
  // cases[spread][format]: f32, f16, bf16.
  std::vector<criteria::FlashCase> cases;
  for (double spread : kA10Spreads)
    for (const char* f : {"f32", "f16", "bf16"}) cases.push_back({f, spread, {}, {}, {}});
  for (size_t seed_index = 0; seed_index < all_seeds.size(); ++seed_index) {
    const int64_t seed = all_seeds[seed_index];
    for (size_t si = 0; si < std::size(kA10Spreads); ++si) {
      // q, k ~ N(0, a²) give scaled logits q·k/sqrt(d_k) of variance a⁴: a = sqrt(spread).
      const double spread = kA10Spreads[si], a = std::sqrt(spread);
      Rng rng(static_cast<uint64_t>(seed) * 97u + 5u + static_cast<uint64_t>(si) * 1000003u);
      const auto q = normals(n, a, rng), k = normals(n, a, rng), v = normals(n, 1.0, rng);
      std::vector<double> qd(q.begin(), q.end()), kd(k.begin(), k.end()), vd(v.begin(), v.end()), ref(static_cast<size_t>(n));
      const double scale = 1.0 / 8.0;
      AttentionSaved<double> saved_d;
      attention_naive_forward<double>(shape, AttentionOptions<double>{.scale = scale}, qd.data(), kd.data(), vd.data(), ref.data(), saved_d);
      double ref_max = 0;
      for (double x : ref) ref_max = std::max(ref_max, std::abs(x));
      auto err = [&](const std::vector<float>& out) {
        double e = 0;
        for (size_t i = 0; i < out.size(); ++i) e = std::max(e, std::abs(double(out[i]) - ref[i]));
        return std::isfinite(e) ? e / ref_max : std::numeric_limits<double>::infinity();
      };
      std::vector<float> out(static_cast<size_t>(n));
      AttentionSaved<float> saved;
      criteria::FlashCase& f32 = cases[si * 3];
      attention_forward<float>(AttentionKernel::flash, shape, AttentionOptions<float>{.scale = scale}, q.data(), k.data(), v.data(), out.data(), saved);
      f32.flash_error.push_back(err(out));
      attention_forward<float>(AttentionKernel::naive, shape, AttentionOptions<float>{.scale = scale}, q.data(), k.data(), v.data(), out.data(), saved);
      f32.naive_error.push_back(err(out));
      f32.flash_overflow.push_back(0);
      // The emulated formats cost ~100x the f32 kernels: the first kA10EmulatedSeeds seeds.
      if (seed_index >= kA10EmulatedSeeds) continue;
      for (DType f : {DType::f16, DType::bf16}) {
        criteria::FlashCase& c = cases[si * 3 + (f == DType::f16 ? 1 : 2)];
        for (SoftmaxAlgorithm alg : {SoftmaxAlgorithm::naive, SoftmaxAlgorithm::flash}) {
          OverflowCounters counters;
          EmulatedAttentionOptions o{.dtype = f, .accumulate = DType::f32, .algorithm = alg, .scale = scale};
          attention_emulated_forward(shape, o, q.data(), k.data(), v.data(), out.data(), counters);
          if (alg == SoftmaxAlgorithm::flash) {
            double of = 0;
            for (const OpCounts& op : counters.ops) of += double(op.overflow + op.nan);
            c.flash_overflow.push_back(of);
            c.flash_error.push_back(err(out));
          } else {
            c.naive_error.push_back(err(out));
          }
        }
      }
    }
  }
  ComputedValues v;
  for (const criteria::FlashCase& c : cases) {
    v.set(a10_series("flash_error", c.format, c.spread), c.flash_error);
    v.set(a10_series("naive_error", c.format, c.spread), c.naive_error);
    v.set(a10_series("flash_overflow", c.format, c.spread), c.flash_overflow);
  }
  // Saved forward state: naive keeps p [B, H, N, N], flash the row log-sum-exp [B, H, N].
  std::vector<double> naive_bytes, flash_bytes;
  for (int64_t len : kA10MemoryLengths) {
    const AttentionShape s1{.batch = 1, .heads = 1, .q_len = len, .k_len = len, .head_dim = 64};
    Rng rng(1);
    const auto q = normals(len * 64, 1.0, rng), k = normals(len * 64, 1.0, rng), v1 = normals(len * 64, 1.0, rng);
    std::vector<float> out(static_cast<size_t>(len * 64));
    for (AttentionKernel kern : {AttentionKernel::naive, AttentionKernel::flash}) {
      AttentionSaved<float> saved;
      attention_forward<float>(kern, s1, AttentionOptions<float>{.scale = 0.125}, q.data(), k.data(), v1.data(), out.data(), saved);
      (kern == AttentionKernel::naive ? naive_bytes : flash_bytes).push_back(4.0 * double(saved.probs.numel() + saved.lse.numel()));
    }
  }
  v.set(std::string("saved bytes ") + attention_kernel_name(AttentionKernel::naive), naive_bytes);
  v.set(std::string("saved bytes ") + attention_kernel_name(AttentionKernel::flash), flash_bytes);
  return v;
}

Claim a10() {
  Claim c;
  c.info = {"A10", "attention",
            "FlashAttention (tiling with online softmax) computes the same result and is numerically safe.",
            "The project's tiled flash kernel against the naive kernel in f32, both against a double "
            "reference (d_k 64, N 256, causal off); the emulated f16/bf16 naive and flash algorithms "
            "against the reference (3 seeds; f32: every init seed); each at scaled-logit standard "
            "deviations 1, 10 and 30; the saved forward state's size against N.",
            "Two parts, each format and logit spread a case, every seed: \"same\" = in f32 max "
            "|flash − reference| <= 1e-5 · max |reference|; \"safe\" = in f16/bf16 the flash error is "
            "<= 2x the naive's and the flash kernel has no overflowing or NaN result."};
  c.plan = [](ClaimRun& r) {
    r.add_computed_arm("kernels", {{"d_k", 64}, {"n", 256}, {"heads", 2}, {"logit_std", std::vector<double>(std::begin(kA10Spreads), std::end(kA10Spreads))},
                                   {"emulated_seeds", kA10EmulatedSeeds},
                                   {"memory_n", std::vector<int64_t>(std::begin(kA10MemoryLengths), std::end(kA10MemoryLengths))}},
                       r.mode().seeds(r.mode().init_seeds));
    r.threshold("same_result_rel", criteria::kSameResultRel);
    r.threshold("safe_error_factor", criteria::kSafeErrorFactor);
  };
  c.evaluate = [](ClaimRun& r) {
    const std::vector<int64_t> all_seeds = r.mode().seeds(r.mode().init_seeds);
    std::vector<std::string> required;
    for (double spread : kA10Spreads)
      for (const char* f : {"f32", "f16", "bf16"})
        for (const char* what : {"flash_error", "naive_error", "flash_overflow"})
          required.push_back(a10_series(what, f, spread));
    for (AttentionKernel kern : {AttentionKernel::naive, AttentionKernel::flash})
      required.push_back(std::string("saved bytes ") + attention_kernel_name(kern));
    const ComputedValues v = r.computed("kernels", r.computed_arm_inputs("kernels"), required,
                                        [&] { return a10_compute(all_seeds); });
    // cases[spread][format]: f32, f16, bf16.
    std::vector<criteria::FlashCase> cases;
    for (double spread : kA10Spreads)
      for (const char* f : {"f32", "f16", "bf16"})
        cases.push_back({f, spread, v.at(a10_series("flash_error", f, spread)), v.at(a10_series("naive_error", f, spread)),
                         v.at(a10_series("flash_overflow", f, spread))});
    for (const criteria::FlashCase& c : cases) {
      const std::string where = c.format + ", logit std " + fmt(c.spread);
      r.measure("max error / max |ref|", "flash " + where, nullptr, "", c.flash_error);
      r.measure("max error / max |ref|", "naive " + where, nullptr, "", c.naive_error);
      if (c.format != "f32") r.measure("flash overflow + NaN", where, nullptr, "", c.flash_overflow);
    }
    Json mem = line_plot("A10-memory", "Forward state saved for the backward, one head", "sequence length N", "bytes", true, true);
    Json naive_pts = Json::array(), flash_pts = Json::array();
    for (size_t i = 0; i < std::size(kA10MemoryLengths); ++i) {
      const int64_t len = kA10MemoryLengths[i];
      for (AttentionKernel kern : {AttentionKernel::naive, AttentionKernel::flash}) {
        const double bytes = v.at(std::string("saved bytes ") + attention_kernel_name(kern)).at(i);
        r.measure("saved bytes", attention_kernel_name(kern), len, "bytes", {bytes});
        (kern == AttentionKernel::naive ? naive_pts : flash_pts).push_back({double(len), bytes});
      }
    }
    mem["series"] = {{{"label", "naive"}, {"points", naive_pts}}, {{"label", "flash"}, {"points", flash_pts}}};
    r.plot(mem);
    Json bars = {{"id", "A10-error"}, {"title", "Max error against the double reference / max |reference|, median over seeds"},
                 {"kind", "bars"}, {"x_label", "format, logit std"}, {"y_label", "relative error"}, {"log_y", true},
                 {"cols", Json::array()}, {"series", Json::array()}};
    Json flash_err_pts = Json::array(), naive_err_pts = Json::array();
    for (size_t i = 0; i < cases.size(); ++i) {
      bars["cols"].push_back(cases[i].format + ", " + fmt(cases[i].spread));
      flash_err_pts.push_back(band_point(double(i), cases[i].flash_error));
      naive_err_pts.push_back(band_point(double(i), cases[i].naive_error));
    }
    bars["series"].push_back({{"label", "flash"}, {"points", flash_err_pts}});
    bars["series"].push_back({{"label", "naive"}, {"points", naive_err_pts}});
    r.plot(bars);
    r.fact("flash_f32_error", median_of(cases[0].flash_error));
    r.key_number("flash vs reference, f32, logit std 1 (relative)", median_of(cases[0].flash_error));
    return criteria::flash_is_safe(cases);
  };
  return c;
}

// ---- A13 ------------------------------------------------------------------------------------

Claim a13() {
  Claim c;
  c.info = {"A13", "attention",
            "Diagnostic: if all attention weights are near 1/n, the scaling is too strong.",
            "The flag: a row is near-uniform when its normalised entropy exceeds tau(n) = 1 − 0.25/ln n, "
            "fixed per row length before the run; it fires when >= 50 % of rows are. Rows of n keys "
            "from iid N(0,1) q, k (d_k 64) scaled by 1/d_k and by 1/sqrt(d_k).",
            "Each row length n is a case, judged on every seed by two parts: the flag fires for 1/d_k, "
            "and it stays quiet for 1/sqrt(d_k). Holds on the n where both do; a fixed threshold of "
            "0.9 is reported beside it."};
  const std::vector<int64_t> ns = {10, 30, 150};
  c.plan = [ns](ClaimRun& r) {
    r.add_computed_arm("synthetic rows", {{"n", ns}, {"d_k", 64}, {"rows", 500}}, r.mode().seeds(r.mode().init_seeds));
    r.threshold("flag_share", criteria::kFlagShare);
  };
  c.evaluate = [ns](ClaimRun& r) {
    std::vector<criteria::FlagCase> cases;
    std::vector<std::pair<double, std::vector<double>>> inv_dk_pts, inv_sqrt_pts;
    double fixed_threshold_share = 0;
    std::vector<std::string> required;
    for (int64_t n : ns)
      for (const char* what : {"1/d_k", "1/sqrt(d_k)", "fixed 0.9"}) required.push_back(std::string(what) + ", n " + std::to_string(n));
    const ComputedValues v = r.computed("synthetic rows", r.computed_arm_inputs("synthetic rows"), required, [&] {
      ComputedValues out;
      for (int64_t n : ns) {
        const double tau = criteria::uniform_threshold(n);
        std::vector<double> share_dk, share_sqrt, fixed09;
        for (int64_t seed : r.mode().seeds(r.mode().init_seeds)) {
          Rng rng(static_cast<uint64_t>(seed) * 7u + static_cast<uint64_t>(n));
          int64_t above_dk = 0, above_sqrt = 0, above_09 = 0;
          std::vector<double> raw(static_cast<size_t>(n)), s(static_cast<size_t>(n)), scratch;
          for (int row = 0; row < 500; ++row) {
            for (double& x : raw) {
              double dot = 0;
              for (int j = 0; j < 64; ++j) dot += rng.normal() * rng.normal();
              x = dot;
            }
            for (int64_t j = 0; j < n; ++j) s[j] = raw[j] / 64.0;
            above_dk += probes::softmax_row_from_logits(s.data(), n, scratch).normalized_entropy > tau;
            for (int64_t j = 0; j < n; ++j) s[j] = raw[j] / 8.0;
            const double h = probes::softmax_row_from_logits(s.data(), n, scratch).normalized_entropy;
            above_sqrt += h > tau;
            above_09 += h >= 0.9;
          }
          share_dk.push_back(above_dk / 500.0);
          share_sqrt.push_back(above_sqrt / 500.0);
          fixed09.push_back(above_09 / 500.0);
        }
        out.set("1/d_k, n " + std::to_string(n), share_dk);
        out.set("1/sqrt(d_k), n " + std::to_string(n), share_sqrt);
        out.set("fixed 0.9, n " + std::to_string(n), fixed09);
      }
      return out;
    });
    for (int64_t n : ns) {
      const std::vector<double>& share_dk = v.at("1/d_k, n " + std::to_string(n));
      const std::vector<double>& share_sqrt = v.at("1/sqrt(d_k), n " + std::to_string(n));
      const std::vector<double>& fixed09 = v.at("fixed 0.9, n " + std::to_string(n));
      r.measure("rows above tau(n)", "1/d_k", n, "", share_dk);
      r.measure("rows above tau(n)", "1/sqrt(d_k)", n, "", share_sqrt);
      cases.push_back({n, share_dk, share_sqrt});
      const double f = r.measure("rows above a fixed 0.9", "1/sqrt(d_k)", n, "", fixed09).median;
      fixed_threshold_share = std::max(fixed_threshold_share, f);
      inv_dk_pts.push_back({double(n), share_dk});
      inv_sqrt_pts.push_back({double(n), share_sqrt});
    }
    Json p = line_plot("A13-flag", "Share of rows flagged near-uniform (entropy > 1 − 0.25/ln n), median over seeds",
                       "keys per row n", "share of rows", true);
    p["series"] = {series("1/d_k", inv_dk_pts), series("1/sqrt(d_k)", inv_sqrt_pts)};
    r.plot(p);
    r.fact("flag_share_inv_dk", median_of(cases.front().share_inv_dk));
    r.fact("flag_share_inv_sqrt_dk", median_of(cases.front().share_inv_sqrt_dk));
    r.fact("fixed_0.9_share_inv_sqrt_dk_max", fixed_threshold_share);
    r.key_number("rows flagged, 1/d_k, n = " + std::to_string(ns.front()), median_of(cases.front().share_inv_dk));
    return criteria::uniform_flag(cases);
  };
  return c;
}

}  // namespace

std::vector<Claim> attention_init_claims() { return {a1(), a2(), a5(), a9(), a10(), a13()}; }

}  // namespace scalelab::ledger
