// Claims E1–E6 (seed 000): what ×sqrt(d_model) does at initialisation.
#include <algorithm>
#include <cmath>
#include <map>
#include <limits>

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
            "Each estimate (Monte Carlo or model table, at each d) is a case; it holds on a case when "
            "|estimate/d − 1| is within 5 standard errors (SE of a mean of ‖x‖²/d over n rows: "
            "sqrt(2/(n·d))), and holds only if on the cases where it does."};
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
    std::vector<std::string> conditions;
    Json mc = Json::array(), table = Json::array();
    const std::vector<int64_t> mc_widths = widths(m, {64, 256, 1024, 4096}, {64, 256});
    std::vector<std::string> mc_names;
    for (int64_t d : mc_widths) mc_names.push_back("d " + std::to_string(d));
    const ComputedValues mc_values = r.computed("monte carlo", r.computed_arm_inputs("monte carlo"), mc_names, [&] {
      ComputedValues out;
      for (int64_t d : mc_widths) {
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
        out.set("d " + std::to_string(d), per);
      }
      return out;
    });
    for (int64_t d : mc_widths) {
      const std::vector<double>& per = mc_values.at("d " + std::to_string(d));
      r.measure("E‖x‖²/d (Monte Carlo)", "monte carlo", d, "", per);
      double mean = 0;
      for (double x : per) mean += x / double(per.size());
      ratios.push_back(mean);
      rel_se.push_back(std::sqrt(2.0 / double(rows * d * int64_t(per.size()))));
      conditions.push_back("Monte Carlo, d = " + std::to_string(d));
      mc.push_back(band_point(double(d), per));
    }
    const Json tree = training_tree(m);
    const std::vector<int64_t> table_widths = widths(m, {64, 256}, {32, 64});
    std::vector<std::string> table_names;
    for (int64_t d : table_widths)
      for (const char* what : {"d ", "entries, d "}) table_names.push_back(what + std::to_string(d));
    const ComputedValues table_values = r.computed("model table", r.computed_arm_inputs("model table"), table_names, [&] {
      ComputedValues out;
      for (int64_t d : table_widths) {
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
        out.set("d " + std::to_string(d), per);
        out.set("entries, d " + std::to_string(d), {double(entries)});
      }
      return out;
    });
    for (int64_t d : table_widths) {
      const std::vector<double>& per = table_values.at("d " + std::to_string(d));
      const int64_t entries = int64_t(table_values.at("entries, d " + std::to_string(d)).at(0));
      r.measure("E‖E_t‖²/d (model table)", "model table", d, "", per);
      double mean = 0;
      for (double x : per) mean += x / double(per.size());
      ratios.push_back(mean);
      rel_se.push_back(std::sqrt(2.0 / double(entries * int64_t(per.size()))));
      conditions.push_back("model table, d = " + std::to_string(d));
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
    return criteria::matches_closed_form(ratios, rel_se, "E‖x‖²/d", conditions);
  };
  return c;
}

// ---- E2 -------------------------------------------------------------------------------------

criteria::PeCase pe_case(int64_t length, int64_t d, std::vector<double>* dim_variance) {
  std::vector<float> pe(static_cast<size_t>(length * d), 0.0f);
  add_sinusoidal_positions(pe.data(), 1, length, d);
  criteria::PeCase c{.length = length, .d_model = d};
  // Every row is checked: the reported one is the row furthest from 0.5.
  c.worst_row_mean_square = 0.5;
  for (int64_t p = 0; p < length; ++p) {
    double s = 0;
    for (int64_t i = 0; i < d; ++i) s += double(pe[p * d + i]) * pe[p * d + i];
    const double ms = s / double(d);
    if (!(std::abs(ms - 0.5) <= std::abs(c.worst_row_mean_square - 0.5))) c.worst_row_mean_square = ms;
  }
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
            "square of every position's row, and the variance of each dimension over positions.",
            "Two readings, each a part judged on every (L, d): per position, every row's mean square "
            "is 0.5 within 1e-6; per dimension, >= 90 % of the dimensions have a variance over "
            "positions within [0.4, 0.6]. The claim holds on the (L, d) where both do (verdict.hpp, "
            "from_parts)."};
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
        r.measure("row mean square furthest from 0.5, d = " + std::to_string(d), "sinusoidal table", L, "",
                  {cases.back().worst_row_mean_square});
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
    double worst_row = 0.5;
    for (const auto& k : cases)
      if (std::abs(k.worst_row_mean_square - 0.5) > std::abs(worst_row - 0.5)) worst_row = k.worst_row_mean_square;
    r.fact("worst_row_mean_square", worst_row);
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
}

// Examples of the validation split whose layer-0 inputs the position probe reads.
constexpr int64_t kProbeExamples = 128;

// Held-out R² of a least-squares map (with an intercept) from the model's own layer-0 input
// x0 = s·E[t] + PE[p] back to its position part PE[p], at the arm's width and seed. The position
// part is the same model's input with the embedding scale set to 0; the first 3/4 of the rows fit
// the map, the last 1/4 score it.
double position_r2(const Json& config, int64_t seed) {
  const int64_t d = config["model"]["d_model"].get<int64_t>();
  Json position_only = config;
  position_only["model"]["embedding"]["scale"] = 0.0;
  const std::vector<float> x = tensor_at_init(config, seed, kProbeExamples, InitTensor::encoder_input);
  const std::vector<float> y = tensor_at_init(position_only, seed, kProbeExamples, InitTensor::encoder_input);
  SL_CHECK(x.size() == y.size() && x.size() % size_t(d) == 0, "position probe: layer-0 inputs of ", x.size(),
           " and ", y.size(), " values at d = ", d);
  const int64_t rows = int64_t(x.size()) / d, train = rows * 3 / 4, e = d + 1;
  auto feature = [&](int64_t i, int64_t j) { return j < d ? double(x[i * d + j]) : 1.0; };
  // Normal equations (FᵀF + λI) W = FᵀY in double, λ tiny against the data's scale, Gauss-Jordan.
  std::vector<double> a(static_cast<size_t>(e * e), 0), b(static_cast<size_t>(e * d), 0);
  for (int64_t i = 0; i < train; ++i)
    for (int64_t j = 0; j < e; ++j) {
      const double fj = feature(i, j);
      for (int64_t k = 0; k < e; ++k) a[j * e + k] += fj * feature(i, k);
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
  for (int64_t i = train; i < rows; ++i)
    for (int64_t k = 0; k < d; ++k) mean[k] += y[i * d + k] / double(rows - train);
  for (int64_t i = train; i < rows; ++i)
    for (int64_t k = 0; k < d; ++k) {
      double pred = 0;
      for (int64_t j = 0; j < e; ++j) pred += feature(i, j) * b[j * d + k];
      sse += (pred - y[i * d + k]) * (pred - y[i * d + k]);
      sst += (y[i * d + k] - mean[k]) * (y[i * d + k] - mean[k]);
    }
  return sst > 0 ? 1.0 - sse / sst : std::numeric_limits<double>::quiet_NaN();
}

std::vector<EmbedArm> read_embed_table(ClaimRun& r, bool with_r2) {
  std::vector<EmbedArm> arms;
  for (const std::string& init : kInits) {
    for (const std::string& scale : kScales) {
      const Arm& a = r.arm(arm_name(init, scale));
      EmbedArm e{init, scale, per_seed(a, [](const Json& res) {
                   return probe_value(res, "embed", "encoder", -1, "input", "token_position_ratio");
                 }), {}};
      r.measure("Var(token)/Var(PE)", a.name, nullptr, "", e.ratio);
      // The probe is judged on the premise's arm only (the others are context), so only it pays.
      if (with_r2 && init == "normal" && scale == "1") {
        const Json inputs = {{"config", a.config}, {"seeds", a.seeds}, {"examples", kProbeExamples}};
        e.position_r2 = r.computed("position probe", inputs, {"position R²"}, [&] {
                           std::vector<double> per;
                           for (int64_t seed : a.seeds) per.push_back(position_r2(a.config, seed));
                           ComputedValues v;
                           v.set("position R²", per);
                           return v;
                         }).at("position R²");
        r.measure("position R² (least squares on the layer-0 input, held out)", a.name, nullptr, "", e.position_r2);
      }
      arms.push_back(e);
    }
  }
  // Heat map: log10 of the median ratio, init × scale.
  Json matrix = Json::array();
  for (const std::string& init : kInits) {
    Json row = Json::array();
    for (const std::string& scale : kScales)
      for (const EmbedArm& e : arms)
        if (e.init == init && e.scale == scale) row.push_back(std::log10(median_of(e.ratio)));
    matrix.push_back(row);
  }
  r.plot({{"id", r.info().id + "-ratio"}, {"title", "log10 Var(token)/Var(PE) at the encoder input, d = " +
                                                        std::to_string(table_width(r.mode())) + ", median over seeds"},
          {"kind", "heatmap"}, {"x_label", "embedding scale"}, {"y_label", "embedding init"},
          {"rows", kInits}, {"cols", kScales}, {"matrix", matrix}, {"series", Json::array()}});
  return arms;
}

const EmbedArm& arm_of(const std::vector<EmbedArm>& arms, const std::string& init, const std::string& scale) {
  for (const EmbedArm& e : arms)
    if (e.init == init && e.scale == scale) return e;
  throw_error("embedding table: no arm ", init, " × ", scale);
}

std::string embed_rule() {
  return "One reading of the ratio for E3 and E4: matched when Var(token)/Var(PE) is within 4x of 1, "
         "the token part dominating when it is above 4.";
}

Claim e3() {
  Claim c;
  c.info = {"E3", "embedding",
            "Unscaled N(0,1) embeddings dominate the sum with the positional encoding, drowning position information.",
            "The claim's premise is the unscaled N(0,1) arm: Var(token part)/Var(PE) per entry at the "
            "encoder input of the model at init, and the held-out R² of a least-squares probe that "
            "recovers the position part from the same model's own layer-0 input (same d and seeds; "
            "the first 3/4 of 128 validation examples fit it, the rest score it). The ratio table over init {N(0,1), N(0,1/d), Xavier} × scale {1, sqrt(d), d, 1/d} is context.",
            "Two parts on the unscaled N(0,1) arm, every seed: \"dominates\" = ratio > 4 (E4's matched "
            "band is within 4x of 1: one reading of one tensor); \"drowned\" = position R² < 0.5. "
            "Holds when both hold; other arms are never conditions."};
  c.plan = [](ClaimRun& r) {
    plan_embed_table(r);
    r.threshold("dominates_ratio", criteria::kDominatesRatio);
    r.threshold("drowned_r2", criteria::kDrownedR2);
  };
  c.evaluate = [](ClaimRun& r) {
    const std::vector<EmbedArm> arms = read_embed_table(r, true);
    for (const EmbedArm& e : arms) r.fact("ratio_" + e.init + "_" + e.scale, median_of(e.ratio));
    r.fact("r2_normal_1", median_of(arm_of(arms, "normal", "1").position_r2));
    r.fact("rule", embed_rule());
    r.key_number("Var(token)/Var(PE), unscaled N(0,1)", median_of(arm_of(arms, "normal", "1").ratio));
    return criteria::unscaled_dominates(arms);
  };
  return c;
}

Claim e4() {
  Claim c;
  c.info = {"E4", "embedding",
            "After ×sqrt(d_model) the embedding and the positional encoding are matched in magnitude.",
            "The E3 table's sqrt(d) column: Var(token)/Var(PE) per entry at the encoder input, for "
            "each init, over seeds.",
            "Each init is a case: \"matched\" = ratio within a factor of 4 of 1 on every seed (the "
            "token part dominates above 4: E3's reading of the same tensor). Holds if every init is "
            "matched; holds only if on the inits that are; does not hold if none is."};
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
        r.fact("ratio_" + e.init, median_of(e.ratio));
      }
    r.fact("rule", embed_rule());
    r.key_number("Var(token)/Var(PE), N(0,1/d) × sqrt(d)", median_of(arm_of(arms, "normal_inv_d", "sqrt_d").ratio));
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
            "Two parts, each judged per norm placement (Post-LN, Pre-LN) on every seed's fitted "
            "exponent: unscaled grows like d² (2 ± 0.5), ×d like d⁴ (4 ± 0.5). The ×sqrt(d) "
            "exponents are reported beside them."};
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
    std::vector<criteria::ExponentCase> cases;
    Json p = line_plot("E5-variance", "Var(q·k) of the first attention layer at init (N(0,1) embeddings, fixed d_k), median over seeds",
                       "d_model", "Var(q·k)", true, true);
    for (const char* norm : {"post", "pre"}) {
      criteria::ExponentCase ec{std::string(norm) == "post" ? "Post-LN" : "Pre-LN", {}, {}, {}};
      for (const char* scale : {"1", "sqrt_d", "d"}) {
        std::vector<std::vector<double>> by_width;  // [width][seed]
        std::vector<std::pair<double, std::vector<double>>> pts;
        std::vector<double> xs, medians;
        for (int64_t d : dims(m)) {
          const Arm& a = r.arm(std::string(norm) + "-LN × " + scale + ", d " + std::to_string(d));
          const auto v = per_seed(a, [](const Json& res) {
            return probe_value(res, "attn_logits_raw", "encoder", 0, "self_attn", "var");
          });
          const Spread s = r.measure("Var(q·k)", a.name, d, "", v);
          xs.push_back(double(d));
          medians.push_back(s.median);
          by_width.push_back(v);
          pts.push_back({double(d), v});
        }
        // One fitted exponent per seed (the seeds share the model's init stream across widths); a
        // seed with a failed or non-positive variance at some width has no exponent (NaN).
        std::vector<double> per_seed_k;
        for (size_t seed = 0; seed < by_width.front().size(); ++seed) {
          std::vector<double> ys;
          bool ok = true;
          for (const auto& w : by_width) {
            ok = ok && seed < w.size() && std::isfinite(w[seed]) && w[seed] > 0;
            if (ok) ys.push_back(w[seed]);
          }
          per_seed_k.push_back(ok ? slope_loglog(xs, ys) : std::numeric_limits<double>::quiet_NaN());
        }
        const std::string label = std::string(norm) + "_" + scale;
        r.measure("fitted exponent of Var(q·k) in d", ec.condition + " × " + scale, nullptr, "", per_seed_k);
        r.fact("exponent_" + label, median_of(per_seed_k));
        p["series"].push_back(series(ec.condition + ", ×" + scale + " (k = " + fmt(median_of(per_seed_k)) + ")", pts));
        (std::string(scale) == "1" ? ec.scale_1 : std::string(scale) == "sqrt_d" ? ec.scale_sqrt_d : ec.scale_d) = per_seed_k;
      }
      cases.push_back(ec);
    }
    r.plot(p);
    r.key_number("fitted exponent, Post-LN, ×d", median_of(cases.front().scale_d));
    return criteria::logit_variance_exponents(cases);
  };
  return c;
}

// ---- E6 -------------------------------------------------------------------------------------

// The counted ops of one precision record in the order a Post-LN forward computes them: the
// q, k, v casts, the embedding scale, the attention, then x + f(x) and the LayerNorm of the sum.
constexpr const char* kForwardOps[] = {"input_cast",   "embedding_scale", "q_scale",         "qk_matmul",
                                       "logit_scale",  "softmax_max_sub", "softmax_exp",     "softmax_sum",
                                       "softmax_div",  "pv_matmul",       "gemm",            "residual_add",
                                       "layernorm_sum", "layernorm_var",  "layernorm_normalize"};

Claim e6() {
  Claim c;
  c.info = {"E6", "embedding",
            "In FP16 with d_model = 4096, the ×sqrt(d_model) embedding can exceed 65504.",
            "Emulated f16 replay of a forward at d_model 4096 (quick: 1024), ×sqrt(d), one encoder and "
            "one decoder layer, 64 heads: overflow counts and max |value| per op (embedding, "
            "LayerNorm sums, QKᵀ, softmax, ...), sums accumulated in f16, for N(0,1) and N(0,1/d) init.",
            "Each init is a case: it holds when the embedding op itself overflows (count > 0) on every "
            "seed. The first op that overflows in forward order and the op with the most overflows "
            "are both reported; the key number names the first."};
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
    const int64_t d = width(r.mode());
    Json bars = {{"id", "E6-overflow"}, {"title", "f16 overflows per op (sums in f16), median over seeds"},
                 {"kind", "bars"}, {"x_label", "op"}, {"y_label", "overflowing results"},
                 {"cols", Json::array()}, {"series", Json::array()}};
    std::vector<std::string> ops;  // every op kind seen, for the bars
    std::vector<criteria::OverflowArm> arms;
    std::map<std::string, std::map<std::string, std::vector<double>>> per_op;  // arm -> op -> per seed
    for (const Arm& a : r.arms()) {
      criteria::OverflowArm o;
      o.condition = std::string(a.name.find("normal_inv_d") != std::string::npos ? "N(0,1/d)" : "N(0,1)") +
                    " init × sqrt(d), d = " + std::to_string(d);
      // The ops in forward order (the probe's records are in forward order; within a record, the
      // Post-LN order below), with their overflows summed over seeds.
      std::vector<criteria::OpOverflow> ordered;
      std::map<std::string, double> by_kind;
      for (size_t seed = 0; seed < a.results.size(); ++seed) {
        double embedding = 0;
        size_t slot = 0;
        std::map<std::string, double> seed_kind;
        for (const Json& rec : a.results[seed]["records"]) {
          if (rec["probe"] != "precision") continue;
          const Json& v = rec["values"];
          const std::string where = rec["stack"].get<std::string>() +
                                    (rec["layer"].get<int64_t>() < 0 ? std::string(" ")
                                                                     : " layer " + std::to_string(rec["layer"].get<int64_t>()) + " ") +
                                    rec["site"].get<std::string>();
          for (const char* op : kForwardOps) {
            const std::string key = std::string(op) + "_overflow";
            if (!v.contains(key)) continue;
            // A missing or non-finite count is a failed measurement: the worst value.
            const double n = v[key].is_number() ? v[key].get<double>() : std::numeric_limits<double>::infinity();
            if (slot == ordered.size()) ordered.push_back({where + ": " + op, 0.0});
            ordered[slot++].overflow += n;
            seed_kind[op] += n;
            if (std::string(op) == "embedding_scale") {
              embedding += n;
              const std::string mk = std::string(op) + "_max_abs";
              if (v.contains(mk) && v[mk].is_number()) o.embedding_max_abs = std::max(o.embedding_max_abs, v[mk].get<double>());
            }
          }
        }
        o.embedding_overflow.push_back(embedding);
        for (const auto& [op, n] : seed_kind) {
          per_op[a.name][op].push_back(n);
          by_kind[op] += n;
          if (std::find(ops.begin(), ops.end(), op) == ops.end()) ops.push_back(op);
        }
      }
      o.first_op = criteria::first_in_forward_order(ordered);
      o.most_op = criteria::most_overflowing_op(ordered);
      for (const auto& x : ordered)
        if (x.op == o.most_op) o.most_count = x.overflow;
      r.measure("overflowing results of the ×sqrt(d) embedding", a.name, nullptr, "", o.embedding_overflow);
      r.measure("embedding max |value|", a.name, nullptr, "", {o.embedding_max_abs});
      arms.push_back(o);
    }
    for (const std::string& op : ops) bars["cols"].push_back(op);
    for (auto& [name, by_op] : per_op) {
      Json pts = Json::array();
      for (size_t i = 0; i < ops.size(); ++i) {
        std::vector<double> v = by_op[ops[i]];
        if (v.empty()) v = {0.0};
        pts.push_back(band_point(double(i), v));
        r.measure("overflows: " + ops[i], name, nullptr, "", v);
      }
      bars["series"].push_back({{"label", name}, {"points", pts}});
    }
    r.plot(bars);
    const criteria::OverflowArm& premise = arms.front();  // N(0,1) × sqrt(d), planned first
    r.fact("first_overflow_op", premise.first_op.empty() ? "none" : premise.first_op);
    r.fact("most_overflow_op", premise.most_op.empty() ? "none" : premise.most_op);
    r.fact("embedding_max_abs", premise.embedding_max_abs);
    r.key_number("embedding max |value| (N(0,1) × sqrt(d)); first overflow: " +
                     (premise.first_op.empty() ? std::string("none") : premise.first_op),
                 premise.embedding_max_abs);
    return criteria::embedding_overflows_f16(arms);
  };
  return c;
}

}  // namespace

std::vector<Claim> embedding_init_claims() { return {e1(), e2(), e3(), e4(), e5(), e6()}; }

}  // namespace scalelab::ledger
