// Claims E1–E6 (seed 000): what ×sqrt(d_model) does at initialisation.
#include <cmath>

#include "scalelab/core/rng.hpp"
#include "scalelab/ledger/claim_groups.hpp"
#include "scalelab/ledger/criteria.hpp"
#include "scalelab/ledger/experiments.hpp"
#include "scalelab/model/transformer.hpp"
#include "scalelab/nn/embedding.hpp"
#include "scalelab/train/trainer.hpp"

namespace scalelab::ledger {
namespace {

using criteria::EmbedArm;

std::vector<int64_t> widths(const LedgerMode& m, std::vector<int64_t> full, std::vector<int64_t> quick) {
  return m.quick ? quick : full;
}

// ---- E1 -------------------------------------------------------------------------------------

Claim e1() {
  Claim c;
  c.info = {"E1", "embedding",
            "With embedding entries iid N(0,1), E‖x‖² = d_model.",
            "Monte Carlo: rows of d iid N(0,1) entries, mean ‖x‖²/d per seed, several d; then the "
            "real embedding table of the project's model at init (embedding.init = normal).",
            "Holds when every |estimate/d − 1| is within 5 standard errors (SE of a mean of ‖x‖²/d "
            "over n rows: sqrt(2/(n·d)))."};
  c.plan = [](ClaimRun& r) {
    const auto& m = r.mode();
    r.add_computed_arm("monte carlo", {{"d_model", widths(m, {64, 256, 1024, 4096}, {64, 256})},
                                       {"rows", m.quick ? 500 : 2000}, {"entries", "N(0,1)"}},
                       m.seeds(m.init_seeds));
    r.add_computed_arm("model table", {{"d_model", widths(m, {64, 256}, {32, 64})},
                                       {"embedding.init", "normal"}, {"task", training_tree(m)["data"]}},
                       m.seeds(m.init_seeds));
    r.threshold("sigmas", criteria::kMonteCarloSigmas);
  };
  c.evaluate = [](ClaimRun& r) {
    const auto& m = r.mode();
    const int64_t rows = m.quick ? 500 : 2000;
    std::vector<double> ratios, rel_se;
    Json mc = Json::array(), table = Json::array();
    for (int64_t d : widths(m, {64, 256, 1024, 4096}, {64, 256})) {
      std::vector<double> per;
      for (int64_t seed : m.seeds(m.init_seeds)) {
        Rng rng(static_cast<uint64_t>(seed) * 1000003u + static_cast<uint64_t>(d));
        double sum = 0;
        for (int64_t i = 0; i < rows * d; ++i) {
          const double z = rng.normal();
          sum += z * z;
        }
        per.push_back(sum / double(rows) / double(d));
      }
      r.measure("E‖x‖²/d (Monte Carlo)", "monte carlo", d, "", per);
      double mean = 0;
      for (double x : per) mean += x / double(per.size());
      ratios.push_back(mean);
      rel_se.push_back(std::sqrt(2.0 / double(rows * d * int64_t(per.size()))));
      mc.push_back(band_point(double(d), per));
    }
    const Json tree = training_tree(m);
    for (int64_t d : widths(m, {64, 256}, {32, 64})) {
      const Json cfg = arm_config(tree, {"model.d_model=" + std::to_string(d), "model.n_heads=1",
                                         "model.embedding.init=\"normal\"", "model.embedding.scale=1"});
      std::vector<double> per;
      int64_t entries = 0;
      for (int64_t seed : m.seeds(m.init_seeds)) {
        RunConfig rc = parse_run_config(cfg);
        rc.model = resolve_vocab(rc.model, shared_task_data(rc.data));
        rc.model.seed = static_cast<uint64_t>(seed);
        Transformer<float> model(rc.model);
        const Tensor<float>& e = model.embedding(true).table().value;
        double sum = 0;
        for (float x : e) sum += double(x) * double(x);
        entries = e.numel();
        per.push_back(sum / double(e.numel()));  // mean over rows of ‖E_t‖²/d
      }
      r.measure("E‖E_t‖²/d (model table)", "model table", d, "", per);
      double mean = 0;
      for (double x : per) mean += x / double(per.size());
      ratios.push_back(mean);
      rel_se.push_back(std::sqrt(2.0 / double(entries * int64_t(per.size()))));
      table.push_back(band_point(double(d), per));
    }
    Json p = line_plot("E1-norm", "E‖x‖² / d_model for N(0,1) entries", "d_model", "E‖x‖² / d_model", true);
    p["series"] = {{{"label", "Monte Carlo"}, {"points", mc}}, {{"label", "model embedding table"}, {"points", table}}};
    r.plot(p);
    double worst = 1;
    for (double x : ratios)
      if (std::abs(x - 1) > std::abs(worst - 1)) worst = x;
    r.fact("worst_ratio", worst);
    r.key_number("worst E‖x‖²/d", worst);
    return criteria::matches_closed_form(ratios, rel_se, "E‖x‖²/d");
  };
  return c;
}

// ---- E2 -------------------------------------------------------------------------------------

criteria::PeCase pe_case(int64_t length, int64_t d, std::vector<double>* dim_variance) {
  std::vector<float> pe(static_cast<size_t>(length * d), 0.0f);
  add_sinusoidal_positions(pe.data(), 1, length, d);
  criteria::PeCase c{.length = length, .d_model = d};
  double row_ms = 0;
  for (int64_t p = 0; p < length; ++p) {
    double s = 0;
    for (int64_t i = 0; i < d; ++i) s += double(pe[p * d + i]) * pe[p * d + i];
    row_ms += s / double(d) / double(length);
  }
  c.row_mean_square = row_ms;
  int64_t near = 0;
  for (int64_t i = 0; i < d; ++i) {
    double mean = 0, sq = 0;
    for (int64_t p = 0; p < length; ++p) mean += pe[p * d + i] / double(length);
    for (int64_t p = 0; p < length; ++p) sq += (pe[p * d + i] - mean) * (pe[p * d + i] - mean) / double(length);
    if (dim_variance) dim_variance->push_back(sq);
    near += (sq >= criteria::kPeDimLo && sq <= criteria::kPeDimHi);
  }
  c.dims_near_half = double(near) / double(d);
  return c;
}

Claim e2() {
  Claim c;
  c.info = {"E2", "embedding",
            "Sinusoidal positional-encoding entries have variance about 0.5.",
            "Exact evaluation of the sinusoidal table for L positions and d dimensions: the mean "
            "square of each position's row, and the variance of each dimension over positions.",
            "Holds when each row's mean square is 0.5 and, in every (L, d), >= 90 % of the "
            "dimensions have a variance over positions within [0.4, 0.6]; if only the rows "
            "satisfy it, it holds only per position."};
  c.plan = [](ClaimRun& r) {
    r.add_computed_arm("sinusoidal table", {{"L", {16, 64, 512, 4096}}, {"d_model", {64, 512}}});
    r.threshold("dim_lo", criteria::kPeDimLo);
    r.threshold("dim_hi", criteria::kPeDimHi);
    r.threshold("dims_share", criteria::kPeDimShare);
  };
  c.evaluate = [](ClaimRun& r) {
    std::vector<criteria::PeCase> cases;
    Json p = line_plot("E2-dims", "Variance of each PE dimension over positions (d = 512)",
                       "dimension index i", "variance over positions 0..L-1");
    for (int64_t d : {64, 512}) {
      for (int64_t L : {16, 64, 512, 4096}) {
        std::vector<double> var;
        cases.push_back(pe_case(L, d, d == 512 ? &var : nullptr));
        r.measure("row mean square, d = " + std::to_string(d), "sinusoidal table", L, "", {cases.back().row_mean_square});
        r.measure("share of dims with variance in [0.4, 0.6], d = " + std::to_string(d), "sinusoidal table", L, "",
                  {cases.back().dims_near_half});
        if (d == 512) {
          Json pts = Json::array();
          for (size_t i = 0; i < var.size(); ++i) pts.push_back({double(i), var[i]});
          p["series"].push_back({{"label", "L = " + std::to_string(L)}, {"points", pts}});
        }
      }
    }
    r.plot(p);
    const criteria::PeCase* worst = &cases.front();
    for (const auto& k : cases)
      if (k.dims_near_half < worst->dims_near_half) worst = &k;
    r.fact("row_mean_square", cases.front().row_mean_square);
    r.fact("worst_dims_near_half", worst->dims_near_half);
    r.fact("worst_length", worst->length);
    r.key_number("share of dims near 0.5 (worst L, d)", worst->dims_near_half);
    return criteria::pe_variance(cases);
  };
  return c;
}

// ---- E3, E4 (and E12's table): token/PE variance and position recovery -------------------

const std::vector<std::string> kInits = {"normal", "normal_inv_d", "xavier_uniform"};
const std::vector<std::string> kScales = {"1", "sqrt_d", "d", "inv_d"};

std::string arm_name(const std::string& init, const std::string& scale) { return init + " × " + scale; }

int64_t table_width(const LedgerMode& m) { return m.quick ? 64 : 256; }

void plan_embed_table(ClaimRun& r) {
  const LedgerMode& m = r.mode();
  const int64_t d = table_width(m);
  const Json tree = training_tree(m);
  for (const std::string& init : kInits)
    for (const std::string& scale : kScales)
      r.add_arm(arm_name(init, scale), RunKind::probe,
                arm_config(tree, {"model.d_model=" + std::to_string(d), "model.n_heads=4",
                                  "model.encoder_layers=1", "model.decoder_layers=1",
                                  "model.embedding.init=\"" + init + "\"", "model.embedding.scale=\"" + scale + "\""}),
                m.seeds(m.init_seeds), {{"batches", 1}, {"batch_size", 64}});
  r.add_computed_arm("position probe", {{"d_model", 64}, {"vocab", 1000}, {"positions", 64},
                                        {"train_rows", 4000}, {"test_rows", 2000}},
                     m.seeds(m.init_seeds));
}

// Held-out R² of a least-squares map from x0 = s·E[t] + PE[p] back to PE[p] (d = 64, a vocabulary
// of 1000 tokens, more than d, so that the token part cannot be projected out exactly).
double position_r2(const std::string& init, const std::string& scale, int64_t seed) {
  const int64_t d = 64, vocab = 1000, positions = 64, train = 4000, test = 2000;
  Rng rng(static_cast<uint64_t>(seed) * 7919u + 17u);
  const double s = scale == "1" ? 1.0 : scale == "sqrt_d" ? std::sqrt(double(d)) : scale == "d" ? double(d) : 1.0 / d;
  std::vector<double> table(static_cast<size_t>(vocab * d));
  const double bound = std::sqrt(6.0 / double(vocab + d));
  for (double& e : table)
    e = init == "normal" ? rng.normal() : init == "normal_inv_d" ? rng.normal() / std::sqrt(double(d))
                                                                 : rng.uniform(-bound, bound);
  std::vector<float> pe(static_cast<size_t>(positions * d), 0.0f);
  add_sinusoidal_positions(pe.data(), 1, positions, d);
  auto sample = [&](int64_t n, std::vector<double>& x, std::vector<double>& y) {
    x.assign(size_t(n * d), 0), y.assign(size_t(n * d), 0);
    for (int64_t i = 0; i < n; ++i) {
      const int64_t t = int64_t(rng.below(vocab)), p = int64_t(rng.below(positions));
      for (int64_t j = 0; j < d; ++j) {
        y[i * d + j] = pe[p * d + j];
        x[i * d + j] = s * table[t * d + j] + pe[p * d + j];
      }
    }
  };
  std::vector<double> x, y, xt, yt;
  sample(train, x, y);
  sample(test, xt, yt);
  // Least squares with an intercept: features [x, 1] (e = d + 1 columns), normal equations
  // (FᵀF + λI) W = FᵀY in double with λ tiny against the data's scale, solved by Gauss-Jordan.
  const int64_t e = d + 1;
  auto feature = [&](const std::vector<double>& m, int64_t i, int64_t j) { return j < d ? m[i * d + j] : 1.0; };
  std::vector<double> a(static_cast<size_t>(e * e), 0), b(static_cast<size_t>(e * d), 0);
  for (int64_t i = 0; i < train; ++i)
    for (int64_t j = 0; j < e; ++j) {
      const double fj = feature(x, i, j);
      for (int64_t k = 0; k < e; ++k) a[j * e + k] += fj * feature(x, i, k);
      for (int64_t k = 0; k < d; ++k) b[j * d + k] += fj * y[i * d + k];
    }
  double trace = 0;
  for (int64_t j = 0; j < e; ++j) trace += a[j * e + j];
  for (int64_t j = 0; j < e; ++j) a[j * e + j] += 1e-9 * trace / double(e);
  for (int64_t col = 0; col < e; ++col) {
    int64_t piv = col;
    for (int64_t row = col + 1; row < e; ++row)
      if (std::abs(a[row * e + col]) > std::abs(a[piv * e + col])) piv = row;
    for (int64_t k = 0; k < e; ++k) std::swap(a[col * e + k], a[piv * e + k]);
    for (int64_t k = 0; k < d; ++k) std::swap(b[col * d + k], b[piv * d + k]);
    const double inv = 1.0 / a[col * e + col];
    for (int64_t k = 0; k < e; ++k) a[col * e + k] *= inv;
    for (int64_t k = 0; k < d; ++k) b[col * d + k] *= inv;
    for (int64_t row = 0; row < e; ++row) {
      const double f = row == col ? 0.0 : a[row * e + col];
      if (f == 0) continue;
      for (int64_t k = 0; k < e; ++k) a[row * e + k] -= f * a[col * e + k];
      for (int64_t k = 0; k < d; ++k) b[row * d + k] -= f * b[col * d + k];
    }
  }
  double sse = 0, sst = 0;
  std::vector<double> mean(static_cast<size_t>(d), 0);
  for (int64_t i = 0; i < test; ++i)
    for (int64_t k = 0; k < d; ++k) mean[k] += yt[i * d + k] / double(test);
  for (int64_t i = 0; i < test; ++i)
    for (int64_t k = 0; k < d; ++k) {
      double pred = 0;
      for (int64_t j = 0; j < e; ++j) pred += feature(xt, i, j) * b[j * d + k];
      sse += (pred - yt[i * d + k]) * (pred - yt[i * d + k]);
      sst += (yt[i * d + k] - mean[k]) * (yt[i * d + k] - mean[k]);
    }
  return 1.0 - sse / sst;
}

std::vector<EmbedArm> read_embed_table(ClaimRun& r, bool with_r2) {
  std::vector<EmbedArm> arms;
  Json rows = Json::array();
  for (const std::string& init : kInits) {
    for (const std::string& scale : kScales) {
      const Arm& a = r.arm(arm_name(init, scale));
      const std::vector<double> ratio = per_seed(a, [](const Json& res) {
        return probe_value(res, "embed", "encoder", -1, "input", "token_position_ratio");
      });
      const Spread rs = r.measure("Var(token)/Var(PE)", a.name, nullptr, "", ratio);
      EmbedArm e{init, scale, rs.median, NAN};
      if (with_r2) {
        std::vector<double> r2;
        for (int64_t seed : a.seeds) r2.push_back(position_r2(init, scale, seed));
        e.position_r2 = r.measure("position R² (least squares, held out)", a.name, nullptr, "", r2).median;
      }
      arms.push_back(e);
    }
  }
  // Heat map: log10 ratio, init × scale.
  Json matrix = Json::array();
  for (const std::string& init : kInits) {
    Json row = Json::array();
    for (const std::string& scale : kScales)
      for (const EmbedArm& e : arms)
        if (e.init == init && e.scale == scale) row.push_back(std::log10(e.ratio));
    matrix.push_back(row);
  }
  r.plot({{"id", r.info().id + "-ratio"}, {"title", "log10 Var(token)/Var(PE) at the encoder input, d = " +
                                                        std::to_string(table_width(r.mode()))},
          {"kind", "heatmap"}, {"x_label", "embedding scale"}, {"y_label", "embedding init"},
          {"rows", kInits}, {"cols", kScales}, {"matrix", matrix}, {"series", Json::array()}});
  return arms;
}

double ratio_of(const std::vector<EmbedArm>& arms, const std::string& init, const std::string& scale) {
  for (const EmbedArm& e : arms)
    if (e.init == init && e.scale == scale) return e.ratio;
  return NAN;
}

Claim e3() {
  Claim c;
  c.info = {"E3", "embedding",
            "Unscaled N(0,1) embeddings dominate the sum with the positional encoding, drowning position information.",
            "Var(token part)/Var(PE) per entry at the encoder input of the model at init, for "
            "init {N(0,1), N(0,1/d), Xavier} × scale {1, sqrt(d), d, 1/d}; and the held-out R² of a "
            "least-squares probe that recovers the PE from the layer-0 input (1000 tokens, d 64).",
            "\"Dominates\" = per-entry ratio >= 10 and position R² < 0.5. Holds if unscaled N(0,1) "
            "does both; holds only if another arm does (named); does not hold otherwise."};
  c.plan = [](ClaimRun& r) {
    plan_embed_table(r);
    r.threshold("dominates_ratio", criteria::kDominatesRatio);
    r.threshold("drowned_r2", criteria::kDrownedR2);
  };
  c.evaluate = [](ClaimRun& r) {
    const std::vector<EmbedArm> arms = read_embed_table(r, true);
    Json bars = {{"id", "E3-r2"}, {"title", "Position recovered from the layer-0 input (held-out R²)"},
                 {"kind", "bars"}, {"x_label", "embedding init × scale"}, {"y_label", "R²"},
                 {"cols", Json::array()}, {"series", Json::array()}};
    Json pts = Json::array();
    for (size_t i = 0; i < arms.size(); ++i) {
      bars["cols"].push_back(arms[i].init + " × " + arms[i].scale);
      pts.push_back({double(i), arms[i].position_r2});
      r.fact("ratio_" + arms[i].init + "_" + arms[i].scale, arms[i].ratio);
      r.fact("r2_" + arms[i].init + "_" + arms[i].scale, arms[i].position_r2);
    }
    bars["series"].push_back({{"label", "median over seeds"}, {"points", pts}});
    r.plot(bars);
    r.key_number("Var(token)/Var(PE), unscaled N(0,1)", ratio_of(arms, "normal", "1"));
    return criteria::unscaled_dominates(arms);
  };
  return c;
}

Claim e4() {
  Claim c;
  c.info = {"E4", "embedding",
            "After ×sqrt(d_model) the embedding and the positional encoding are matched in magnitude.",
            "The E3 table's sqrt(d) column: Var(token)/Var(PE) per entry for each init.",
            "\"Matched\" = ratio within a factor of 4 of 1. Holds if every init is matched; holds only "
            "if some are (named); does not hold if none is."};
  c.plan = [](ClaimRun& r) {
    plan_embed_table(r);
    r.threshold("matched_factor", criteria::kMatchedFactor);
  };
  c.evaluate = [](ClaimRun& r) {
    const std::vector<EmbedArm> arms = read_embed_table(r, false);
    std::vector<EmbedArm> scaled;
    for (const EmbedArm& e : arms)
      if (e.scale == "sqrt_d") {
        scaled.push_back(e);
        r.fact("ratio_" + e.init, e.ratio);
      }
    r.key_number("Var(token)/Var(PE), N(0,1/d) × sqrt(d)", ratio_of(arms, "normal_inv_d", "sqrt_d"));
    return criteria::scaled_matches(scaled);
  };
  return c;
}

// ---- E5 -------------------------------------------------------------------------------------

Claim e5() {
  Claim c;
  c.info = {"E5", "embedding",
            "Unscaled, the QKᵀ variance grows like d_model²; with ×d_model like d_model⁴ and explodes.",
            "Variance of the raw logits q·k of the first encoder self-attention at init against d_model, "
            "N(0,1) embeddings, d_k fixed (heads = d/d_k), scales {1, sqrt(d), d}, Post-LN and Pre-LN; "
            "the exponent is the least-squares slope of log Var against log d.",
            "The seed's exponents (2 unscaled, 4 with ×d) are accepted within ±0.5. If instead sqrt(d) "
            "gives 2 and d gives 4, it holds only with the seed one level off."};
  auto dims = [](const LedgerMode& m) { return m.quick ? std::vector<int64_t>{32, 64, 128} : std::vector<int64_t>{64, 128, 256, 512}; };
  c.plan = [dims](ClaimRun& r) {
    const LedgerMode& m = r.mode();
    const int64_t dk = m.quick ? 16 : 32;
    const Json tree = training_tree(m);
    for (const char* norm : {"post", "pre"})
      for (const char* scale : {"1", "sqrt_d", "d"})
        for (int64_t d : dims(m))
          r.add_arm(std::string(norm) + "-LN × " + scale + ", d " + std::to_string(d), RunKind::probe,
                    arm_config(tree, {"model.d_model=" + std::to_string(d), "model.n_heads=" + std::to_string(d / dk),
                                      "model.d_ff=" + std::to_string(d), "model.encoder_layers=1", "model.decoder_layers=1",
                                      std::string("model.norm=\"") + norm + "\"", "model.embedding.init=\"normal\"",
                                      std::string("model.embedding.scale=\"") + scale + "\""}),
                    m.seeds(m.init_seeds), {{"batches", 1}, {"batch_size", 32}});
    r.threshold("exponent_tolerance", criteria::kExponentTolerance);
  };
  c.evaluate = [dims](ClaimRun& r) {
    const LedgerMode& m = r.mode();
    criteria::Exponents e;
    Json p = line_plot("E5-variance", "Var(q·k) of the first attention layer at init (N(0,1) embeddings, fixed d_k)",
                       "d_model", "Var(q·k)", true, true);
    for (const char* norm : {"post", "pre"}) {
      for (const char* scale : {"1", "sqrt_d", "d"}) {
        std::vector<double> xs, ys;
        std::vector<std::pair<double, std::vector<double>>> pts;
        for (int64_t d : dims(m)) {
          const Arm& a = r.arm(std::string(norm) + "-LN × " + scale + ", d " + std::to_string(d));
          const auto v = per_seed(a, [](const Json& res) {
            return probe_value(res, "attn_logits_raw", "encoder", 0, "self_attn", "var");
          });
          const Spread s = r.measure("Var(q·k)", a.name, d, "", v);
          xs.push_back(double(d));
          ys.push_back(s.median);
          pts.push_back({double(d), v});
        }
        const double k = slope_loglog(xs, ys);
        r.fact(std::string("exponent_") + norm + "_" + scale, k);
        p["series"].push_back(series(std::string(norm) + "-LN, ×" + scale + " (k = " + fmt(k) + ")", pts));
        if (std::string(norm) == "post") {
          if (std::string(scale) == "1") e.scale_1 = k;
          else if (std::string(scale) == "sqrt_d") e.scale_sqrt_d = k;
          else e.scale_d = k;
        } else {
          e.pre_ln_max_abs = std::max(e.pre_ln_max_abs, std::abs(k));
        }
      }
    }
    r.plot(p);
    r.key_number("fitted exponent, Post-LN, ×d", e.scale_d);
    return criteria::logit_variance_exponents(e);
  };
  return c;
}

// ---- E6 -------------------------------------------------------------------------------------

Claim e6() {
  Claim c;
  c.info = {"E6", "embedding",
            "In FP16 with d_model = 4096, the ×sqrt(d_model) embedding can exceed 65504.",
            "Emulated f16 replay of a forward at d_model 4096 (quick: 1024), ×sqrt(d), one encoder and "
            "one decoder layer, 64 heads: overflow counts and max |value| per op (embedding, "
            "LayerNorm sums, QKᵀ, softmax, ...), sums accumulated in f16, for N(0,1) and N(0,1/d) init.",
            "Holds when the embedding op itself overflows (count > 0); the op with most overflows is "
            "reported as the one that overflows first."};
  auto width = [](const LedgerMode& m) { return m.quick ? int64_t{1024} : int64_t{4096}; };
  c.plan = [width](ClaimRun& r) {
    const LedgerMode& m = r.mode();
    const int64_t d = width(m);
    for (const char* init : {"normal", "normal_inv_d"})
      r.add_arm(std::string("f16, ") + init + " × sqrt_d", RunKind::probe,
                arm_config(training_tree(m), {"model.d_model=" + std::to_string(d), "model.n_heads=" + std::to_string(d / 64),
                                              "model.d_ff=" + std::to_string(d), "model.encoder_layers=1",
                                              "model.decoder_layers=1", std::string("model.embedding.init=\"") + init + "\"",
                                              "model.embedding.scale=\"sqrt_d\""}),
                m.seeds(m.quick ? 2 : m.init_seeds),
                {{"batches", 1}, {"batch_size", 8}, {"precision", "f16"}, {"accumulate", "format"}});
  };
  c.evaluate = [width](ClaimRun& r) {
    criteria::OverflowByOp seed_premise;
    Json bars = {{"id", "E6-overflow"}, {"title", "f16 overflows per op (sums in f16), summed over seeds"},
                 {"kind", "bars"}, {"x_label", "op"}, {"y_label", "overflowing results"},
                 {"cols", Json::array()}, {"series", Json::array()}};
    std::vector<std::string> ops;
    std::map<std::string, criteria::OverflowByOp> by_arm;
    for (const Arm& a : r.arms()) {
      criteria::OverflowByOp& o = by_arm[a.name];
      for (const Json& res : a.results)
        for (const Json& rec : res["records"]) {
          if (rec["probe"] != "precision") continue;
          for (const auto& [key, v] : rec["values"].items()) {
            if (!v.is_number()) continue;
            const size_t us = key.rfind('_');
            const std::string op = key.substr(0, us), field = key.substr(us + 1);
            if (key.size() > 8 && key.substr(key.size() - 8) == "_max_abs") {
              const std::string op2 = key.substr(0, key.size() - 8);
              o.max_abs[op2] = std::max(o.max_abs[op2], v.get<double>());
            } else if (field == "overflow") {
              o.overflow[op] += v.get<double>();
              if (std::find(ops.begin(), ops.end(), op) == ops.end()) ops.push_back(op);
            }
          }
        }
      r.measure("embedding max |value|", a.name, nullptr, "", {o.max_abs["embedding_scale"]});
    }
    for (size_t i = 0; i < ops.size(); ++i) bars["cols"].push_back(ops[i]);
    for (auto& [name, o] : by_arm) {
      Json pts = Json::array();
      for (size_t i = 0; i < ops.size(); ++i) {
        pts.push_back({double(i), o.overflow[ops[i]]});
        r.measure("overflows: " + ops[i], name, nullptr, "", {o.overflow[ops[i]]});
      }
      bars["series"].push_back({{"label", name}, {"points", pts}});
    }
    r.plot(bars);
    const criteria::OverflowByOp& premise = by_arm["f16, normal × sqrt_d"];
    const std::string first = criteria::first_overflowing_op(premise);
    r.fact("first_overflow_op", first.empty() ? "none" : first);
    r.fact("embedding_max_abs", premise.max_abs.count("embedding_scale") ? premise.max_abs.at("embedding_scale") : 0.0);
    r.key_number("embedding max |value| (N(0,1) × sqrt(d))",
                 premise.max_abs.count("embedding_scale") ? premise.max_abs.at("embedding_scale") : 0.0);
    return criteria::embedding_overflows_f16(premise, width(r.mode()));
  };
  return c;
}

}  // namespace

std::vector<Claim> embedding_init_claims() { return {e1(), e2(), e3(), e4(), e5(), e6()}; }

}  // namespace scalelab::ledger
