#include "scalelab/ledger/user_claims.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <optional>
#include <set>

#include "scalelab/core/error.hpp"
#include "scalelab/ledger/check.hpp"
#include "scalelab/ledger/criteria_training.hpp"
#include "scalelab/ledger/experiments.hpp"
#include "scalelab/ledger/user_measures.hpp"
#include "scalelab/train/run_config.hpp"

namespace fs = std::filesystem;

namespace scalelab::ledger {
namespace {

struct ArmSpec {
  std::string name;
  std::vector<std::string> set;
};
struct SweepSpec {
  std::string key;
  std::vector<Json> values;
};
struct CriterionSpec {
  std::string kind, arm, than, at = "every";
  double margin = 0, tolerance = 0.02, threshold = NAN;
};
struct ClaimSpec {
  std::string file, id, statement;
  Json tree;  // the base tree before any override
  std::vector<std::string> set;  // base overrides (steps included)
  std::vector<ArmSpec> arms;
  std::optional<SweepSpec> sweep;
  int64_t seeds = 3;
  MeasureSpec measure;
  CriterionSpec criterion;
};

const std::vector<std::string> kCriteria = {"better", "worse", "equivalent", "ratio_at_least", "diverges"};

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

// Reads one claim file's values with errors that name the file, the claim and the key.
class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}
  void set_claim(const std::string& id) { claim_ = id; }

  [[noreturn]] void fail(const std::string& key, const std::string& problem) const {
    throw_error(file_, (claim_.empty() ? "" : ": claim \"" + claim_ + "\""), ": ", key, ": ", problem);
  }
  void only_keys(const Json& table, const std::string& where, const std::vector<std::string>& allowed) const {
    if (!table.is_object()) fail(where, "expected a table");
    for (const auto& [k, v] : table.items())
      if (std::find(allowed.begin(), allowed.end(), k) == allowed.end())
        fail(where.empty() ? k : where + "." + k, "unknown key; allowed: " + joined(allowed));
  }
  std::string text(const Json& t, const std::string& key, const std::string& where, bool required,
                   const std::string& fallback = "") const {
    if (!t.contains(key)) {
      if (required) fail(where + key, "missing (a string is required)");
      return fallback;
    }
    if (!t[key].is_string()) fail(where + key, value_text(t[key]) + ": expected a string");
    return t[key].get<std::string>();
  }
  double number(const Json& t, const std::string& key, const std::string& where, double fallback) const {
    if (!t.contains(key)) return fallback;
    if (!t[key].is_number() || !std::isfinite(t[key].get<double>()))
      fail(where + key, value_text(t[key]) + ": expected a finite number");
    return t[key].get<double>();
  }
  int64_t integer(const Json& t, const std::string& key, const std::string& where, int64_t fallback,
                  int64_t lo, int64_t hi) const {
    if (!t.contains(key)) return fallback;
    const Json& v = t[key];
    if (!v.is_number_integer() || v.get<int64_t>() < lo || v.get<int64_t>() > hi)
      fail(where + key, value_text(v) + ": expected an integer in " + std::to_string(lo) + ".." + std::to_string(hi));
    return v.get<int64_t>();
  }
  std::vector<std::string> strings(const Json& t, const std::string& key, const std::string& where) const {
    std::vector<std::string> out;
    if (!t.contains(key)) return out;
    if (!t[key].is_array()) fail(where + key, "expected an array of \"section.key=value\" strings");
    for (const Json& s : t[key]) {
      if (!s.is_string()) fail(where + key, value_text(s) + ": expected a \"section.key=value\" string");
      out.push_back(s.get<std::string>());
    }
    return out;
  }
  const std::string& file() const { return file_; }

 private:
  std::string file_, claim_;
};

bool valid_id_chars(const std::string& id) {
  return !id.empty() && std::all_of(id.begin(), id.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_';
  });
}

// The value of a resolved config's dotted key, or null when the config has no such key.
const Json* config_key(const Json& config, const std::string& key) {
  const Json* at = &config;
  size_t start = 0;
  for (;;) {
    const size_t dot = key.find('.', start);
    const std::string part = key.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (!at->is_object() || !at->contains(part)) return nullptr;
    at = &(*at)[part];
    if (dot == std::string::npos) return at;
    start = dot + 1;
  }
}

std::string override_of(const std::string& key, const Json& value) { return key + "=" + value_text(value); }
std::string case_name(const SweepSpec& s, const Json& value) {
  return s.key + " = " + (value.is_string() ? value.get<std::string>() : value_text(value));
}

MeasureSpec read_measure(const Reader& r, const Json& claim) {
  if (!claim.contains("measure")) r.fail("measure", "missing; allowed: " + joined(measure_names()));
  const Json& j = claim["measure"];
  MeasureSpec m;
  const Json table = j.is_string() ? Json{{"name", j}} : j;
  if (!table.is_object()) r.fail("measure", "expected a measure name or a table with \"name\"");
  m.name = r.text(table, "name", "measure.", true);
  const auto& names = measure_names();
  if (std::find(names.begin(), names.end(), m.name) == names.end())
    r.fail("measure", "\"" + m.name + "\": unknown measure; allowed: " + joined(names));
  std::vector<std::string> keys = measure_keys(m.name);
  keys.insert(keys.begin(), "name");
  r.only_keys(table, "measure", keys);
  if (m.name == "steps_to_loss") {
    if (!table.contains("target")) r.fail("measure.target", "missing (steps_to_loss needs the loss to reach)");
    m.target = r.number(table, "target", "measure.", NAN);
  }
  m.stack = r.text(table, "stack", "measure.", false, m.stack);
  if (m.stack != "encoder" && m.stack != "decoder") r.fail("measure.stack", "\"" + m.stack + "\": allowed: encoder, decoder");
  m.layer = r.integer(table, "layer", "measure.", 0, 0, 1000);
  m.step = r.integer(table, "step", "measure.", 1, 1, 10000000);
  m.site = r.text(table, "site", "measure.", false, m.site);
  if (m.name == "probe") {
    m.probe = r.text(table, "probe", "measure.", true);
    m.field = r.text(table, "field", "measure.", true);
  }
  return m;
}

CriterionSpec read_criterion(const Reader& r, const Json& claim, const std::vector<ArmSpec>& arms) {
  if (!claim.contains("criterion")) r.fail("criterion", "missing (a table with kind, arm, than)");
  const Json& t = claim["criterion"];
  r.only_keys(t, "criterion", {"kind", "arm", "than", "at", "margin", "tolerance", "threshold"});
  CriterionSpec c;
  c.kind = r.text(t, "kind", "criterion.", true);
  if (std::find(kCriteria.begin(), kCriteria.end(), c.kind) == kCriteria.end())
    r.fail("criterion.kind", "\"" + c.kind + "\": allowed: " + joined(kCriteria));
  std::vector<std::string> names;
  for (const ArmSpec& a : arms) names.push_back(a.name);
  auto arm_named = [&](const std::string& key, bool required) {
    const std::string name = r.text(t, key, "criterion.", required);
    if (!name.empty() && std::find(names.begin(), names.end(), name) == names.end())
      r.fail("criterion." + key, "\"" + name + "\": no such arm; allowed: " + joined(names));
    return name;
  };
  c.arm = arm_named("arm", true);
  c.than = arm_named("than", c.kind != "diverges");
  if (!c.than.empty() && c.than == c.arm) r.fail("criterion.than", "\"" + c.than + "\": must differ from criterion.arm");
  c.at = r.text(t, "at", "criterion.", false, "every");
  if (c.at != "every" && c.at != "some") r.fail("criterion.at", "\"" + c.at + "\": allowed: every, some");
  c.margin = r.number(t, "margin", "criterion.", 0.0);
  c.tolerance = r.number(t, "tolerance", "criterion.", 0.02);
  if (c.margin < 0) r.fail("criterion.margin", "must be >= 0");
  if (c.tolerance < 0) r.fail("criterion.tolerance", "must be >= 0");
  if (c.kind == "ratio_at_least") {
    if (!t.contains("threshold")) r.fail("criterion.threshold", "missing (ratio_at_least needs it)");
    c.threshold = r.number(t, "threshold", "criterion.", NAN);
  }
  return c;
}

ClaimSpec read_claim(Reader& r, const Json& claim, const LedgerMode& mode, size_t index) {
  ClaimSpec s;
  s.file = r.file();
  const std::string where = "claim[" + std::to_string(index + 1) + "]";
  if (!claim.is_object()) r.fail(where, "expected a table");
  if (!claim.contains("id") || !claim["id"].is_string()) r.fail(where + ".id", "missing (a string is required)");
  s.id = claim["id"].get<std::string>();
  r.set_claim(s.id);
  if (!valid_id_chars(s.id)) r.fail("id", "\"" + s.id + "\": allowed: letters, digits, - and _");
  if (builtin_shaped_id(s.id))
    r.fail("id", "\"" + s.id + "\": E, A or B followed by digits is a built-in claim's form; choose another id");
  r.only_keys(claim, "", {"id", "statement", "base", "arms", "sweep", "seeds", "steps", "measure", "criterion"});
  s.statement = r.text(claim, "statement", "", true);
  s.seeds = r.integer(claim, "seeds", "", mode.train_seeds, 2, 50);

  // Base: a config file (relative to the claim file) or the ledger's own training tree, then a
  // preset's [model], then `set`.
  const Json base = claim.value("base", Json::object());
  r.only_keys(base, "base", {"config", "preset", "set"});
  const std::string config = r.text(base, "config", "base.", false);
  const std::string preset = r.text(base, "preset", "base.", false);
  if (config.empty()) {
    s.tree = training_tree(mode);
  } else {
    const fs::path path = fs::path(s.file).parent_path() / config;
    if (!fs::exists(path)) r.fail("base.config", "\"" + config + "\": no such file (" + path.string() + ")");
    try {
      s.tree = read_toml_file(path.string());
    } catch (const Error& e) {
      r.fail("base.config", e.what());
    }
  }
  s.set = r.strings(base, "set", "base.");
  if (claim.contains("steps"))
    s.set.push_back("train.steps=" + std::to_string(r.integer(claim, "steps", "", 0, 1, 1000000)));
  if (!preset.empty()) s.tree["preset"] = preset;

  if (!claim.contains("arms") || !claim["arms"].is_array() || claim["arms"].size() < 1)
    r.fail("arms", "missing (an array of tables [[claim.arms]] with name and set)");
  for (const Json& a : claim["arms"]) {
    r.only_keys(a, "arms", {"name", "set"});
    ArmSpec arm{r.text(a, "name", "arms.", true), r.strings(a, "set", "arms.")};
    for (const ArmSpec& other : s.arms)
      if (other.name == arm.name) r.fail("arms.name", "\"" + arm.name + "\": declared twice");
    s.arms.push_back(std::move(arm));
  }
  if (claim.contains("sweep")) {
    const Json& t = claim["sweep"];
    r.only_keys(t, "sweep", {"key", "values"});
    SweepSpec sw{r.text(t, "key", "sweep.", true), {}};
    if (!t.contains("values") || !t["values"].is_array() || t["values"].empty())
      r.fail("sweep.values", "missing (a non-empty array of values)");
    for (const Json& v : t["values"]) {
      if (v.is_object() || v.is_array()) r.fail("sweep.values", value_text(v) + ": expected a number, string or boolean");
      sw.values.push_back(v);
    }
    s.sweep = std::move(sw);
  }
  s.measure = read_measure(r, claim);
  s.criterion = read_criterion(r, claim, s.arms);
  if (s.measure.name == "best_lr" && s.sweep && s.sweep->key == "train.lr")
    r.fail("sweep.key", "train.lr cannot be swept when the measure is best_lr (each arm sweeps its own rates)");
  return s;
}

std::string resolved_preset(const Json& tree) { return tree.value("preset", std::string()); }

// The resolved config of an arm at a sweep value; a rejected override is an error naming it.
Json arm_at(const Reader& r, const ClaimSpec& s, const ArmSpec& arm, const Json* value) {
  std::vector<std::string> overrides = s.set;
  overrides.insert(overrides.end(), arm.set.begin(), arm.set.end());
  if (value) overrides.push_back(override_of(s.sweep->key, *value));
  Json tree = s.tree;
  tree.erase("preset");
  try {
    return arm_config(tree, overrides, resolved_preset(s.tree));
  } catch (const Error& e) {
    r.fail(value ? "arms \"" + arm.name + "\" at sweep " + case_name(*s.sweep, *value) : "arms \"" + arm.name + "\"",
           e.what());
  }
}

void validate(const Reader& r, const ClaimSpec& s) {
  for (const ArmSpec& a : s.arms) {
    const Json config = arm_at(r, s, a, nullptr);
    if (s.sweep) {
      if (!config_key(config, s.sweep->key) || config_key(config, s.sweep->key)->is_object())
        r.fail("sweep.key", "\"" + s.sweep->key + "\": not a config key (a [model], [data] or [train] key, e.g. model.d_model; docs/training.md)");
      for (const Json& v : s.sweep->values) arm_at(r, s, a, &v);
    }
  }
}

std::string arm_run_name(const ClaimSpec& s, const std::string& arm, const Json* value) {
  return value ? arm + ", " + case_name(*s.sweep, *value) : arm;
}

// The per-seed values of the criterion and what a seed must meet.
struct Judged {
  std::vector<double> values;
  std::function<bool(double)> meets;
  std::string what, unit;
};

Judged judge(const ClaimSpec& s, const Arm& test, const Arm* base) {
  const CriterionSpec& c = s.criterion;
  const MeasureSpec& m = s.measure;
  if (c.kind == "diverges") {
    std::vector<double> failed;
    for (const Json& res : test.results) failed.push_back(diverged(res) || !std::isfinite(final_valid_nll(res)) ? 1.0 : 0.0);
    return {failed, [](double x) { return x >= 1.0; }, test.name + " diverged (1) or not (0)", ""};
  }
  const criteria::PairedRuns p{measure_per_seed(m, test), measure_per_seed(m, *base)};
  if (c.kind == "ratio_at_least")
    return {criteria::paired_ratios(p), [t = c.threshold](double x) { return x >= t; },
            measure_label(m) + ", " + c.arm + " / " + c.than, "x"};
  if (c.kind == "equivalent") {
    if (log_scale_measure(m)) {
      std::vector<double> steps;
      for (double ratio : criteria::paired_ratios(p)) steps.push_back(std::abs(std::log2(ratio)));
      return {steps, [t = c.tolerance](double x) { return x <= t; }, measure_label(m) + ", |log2(" + c.arm + " / " + c.than + ")|", ""};
    }
    return {criteria::paired_gaps(p), [t = c.tolerance](double x) { return x <= t; },
            measure_label(m) + ", |" + c.arm + " - " + c.than + "| / |" + c.than + "|", ""};
  }
  const bool better = c.kind == "better";
  return {criteria::paired_differences(p),
          better ? std::function<bool(double)>([mg = c.margin](double d) { return d < -mg; })
                 : std::function<bool(double)>([mg = c.margin](double d) { return d > mg; }),
          measure_label(m) + ", " + c.arm + " - " + c.than, measure_unit(m)};
}

std::string criterion_text(const ClaimSpec& s) {
  const CriterionSpec& c = s.criterion;
  const std::string m = measure_label(s.measure);
  std::string body;
  if (c.kind == "better") body = m + " of \"" + c.arm + "\" lower than \"" + c.than + "\"'s by more than " + fmt(c.margin);
  if (c.kind == "worse") body = m + " of \"" + c.arm + "\" higher than \"" + c.than + "\"'s by more than " + fmt(c.margin);
  if (c.kind == "equivalent")
    body = log_scale_measure(s.measure) ? m + " of \"" + c.arm + "\" within " + fmt(c.tolerance) + " x2 steps of \"" + c.than + "\"'s"
                                        : m + " of \"" + c.arm + "\" within " + fmt(100 * c.tolerance) + " % of \"" + c.than + "\"'s";
  if (c.kind == "ratio_at_least") body = m + " of \"" + c.arm + "\" >= " + fmt(c.threshold) + "x \"" + c.than + "\"'s";
  if (c.kind == "diverges") body = "\"" + c.arm + "\" diverges";
  return body + " on every paired seed (a failed run is the worst value), " +
         (s.sweep ? (c.at == "every" ? "at every " : "at some ") + s.sweep->key + " tested" : std::string("in the one setting tested")) +
         "; training arms at their own best learning rate" +
         (s.measure.name == "best_lr" || (s.sweep && s.sweep->key == "train.lr") ? " (except where the learning rate is the subject)" : "") + ".";
}

Claim compile(const ClaimSpec& s) {
  Claim c;
  std::string arms;
  for (const ArmSpec& a : s.arms) arms += (arms.empty() ? "" : "; ") + a.name + (a.set.empty() ? " (the base)" : ": " + joined(a.set));
  c.info = {s.id, "user (" + fs::path(s.file).filename().string() + ")", s.statement,
            "Arms " + arms + (s.sweep ? "; swept over " + s.sweep->key : "") + "; " + std::to_string(s.seeds) +
                " paired seeds; measure: " + measure_label(s.measure) + ".",
            criterion_text(s)};
  c.plan = [s](ClaimRun& run) {
    const bool lr_swept = s.sweep && s.sweep->key == "train.lr";
    const bool best_lr = measures_learning_rate(s.measure);
    if (lr_swept || best_lr) run.learning_rate_is_the_subject();
    std::vector<int64_t> seeds;
    for (int64_t i = 1; i <= s.seeds; ++i) seeds.push_back(i);
    const Reader r(s.file);
    auto add = [&](const ArmSpec& a, const Json* value) {
      const Json config = arm_at(r, s, a, value);
      const std::string name = arm_run_name(s, a.name, value);
      if (measured_at_init(s.measure)) {
        run.add_arm(name, RunKind::probe, config, seeds, {{"batches", 1}, {"batch_size", 64}});
        return;
      }
      // Observed as the built-in arms are (step 1 and 8 more times), so shared runs share the cache.
      const int64_t steps = config["train"]["steps"].get<int64_t>();
      Arm& arm = run.add_arm(name, RunKind::train, config, seeds, {{"observe_every", std::max<int64_t>(1, steps / 8)}});
      arm.tune_lr = !lr_swept;
      arm.lr_rank_all_seeds = best_lr;
    };
    if (!s.sweep) {
      for (const ArmSpec& a : s.arms) add(a, nullptr);
    } else {
      for (const Json& v : s.sweep->values)
        for (const ArmSpec& a : s.arms) add(a, &v);
    }
  };
  c.evaluate = [s](ClaimRun& run) {
    const CriterionSpec& cr = s.criterion;
    std::vector<Case> cases;
    const bool numeric = s.sweep && std::all_of(s.sweep->values.begin(), s.sweep->values.end(),
                                                [](const Json& v) { return v.is_number(); });
    Json plot = line_plot(s.id + "-measure", measure_label(s.measure) + (s.sweep ? " against " + s.sweep->key : "") +
                                                 ", median over seeds with min..max",
                          s.sweep ? s.sweep->key + (numeric ? "" : " (index of the value)") : "arm", measure_label(s.measure));
    std::map<std::string, std::vector<std::pair<double, std::vector<double>>>> points;
    auto one_case = [&](const Json* value, double x) {
      for (const ArmSpec& a : s.arms) {
        const std::string name = arm_run_name(s, a.name, value);
        const std::vector<double> v = measure_per_seed(s.measure, run.arm(name));
        run.measure(measure_label(s.measure), name, value ? *value : Json(nullptr), measure_unit(s.measure), v);
        points[a.name].push_back({x, v});
      }
      const Arm& test = run.arm(arm_run_name(s, cr.arm, value));
      const Arm* base = cr.than.empty() ? nullptr : &run.arm(arm_run_name(s, cr.than, value));
      const Judged j = judge(s, test, base);
      const std::string condition = value ? case_name(*s.sweep, *value) : "the setting tested";
      run.measure(j.what, "paired", value ? *value : Json(nullptr), j.unit, j.values);
      cases.push_back(criteria::seed_case(condition, j.values, j.meets, j.what, j.unit));
    };
    if (!s.sweep) {
      one_case(nullptr, 0);
    } else {
      for (size_t i = 0; i < s.sweep->values.size(); ++i)
        one_case(&s.sweep->values[i], numeric ? s.sweep->values[i].get<double>() : double(i));
    }
    for (const ArmSpec& a : s.arms) plot["series"].push_back(series(a.name, points[a.name]));
    run.plot(plot);
    const std::string head = s.statement;
    const std::string range = s.sweep ? s.sweep->key : "setting";
    Verdict v = from_cases(cases, head, range);
    // "At some": the claim is existential, so one case where it held is enough.
    if (cr.at == "some" && v.kind == VerdictKind::holds_only_if) {
      Verdict h = Verdict::holds(v.sentence + " (the claim asks for some " + range + ": it held at " + v.condition + ")");
      h.held_on = v.held_on, h.failed_on = v.failed_on, h.undecided_on = v.undecided_on, h.tested = v.tested;
      v = h;
    }
    return v;
  };
  return c;
}

}  // namespace

bool builtin_shaped_id(const std::string& id) {
  if (id.size() < 2) return false;
  const char g = static_cast<char>(std::toupper(static_cast<unsigned char>(id[0])));
  return (g == 'E' || g == 'A' || g == 'B') &&
         std::all_of(id.begin() + 1, id.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

std::vector<Claim> load_claim_files(const std::vector<std::string>& paths, const LedgerMode& mode) {
  std::vector<Claim> out;
  std::map<std::string, std::string> seen;  // id -> file
  for (const std::string& path : paths) {
    Reader r(path);
    if (!fs::is_regular_file(path)) r.fail("--claims", "no such file");
    Json doc;
    try {
      doc = read_toml_file(path);
    } catch (const Error& e) {
      throw_error(path, ": ", e.what());
    }
    r.only_keys(doc, "", {"claim"});
    if (!doc.contains("claim") || !doc["claim"].is_array() || doc["claim"].empty())
      r.fail("claim", "missing (the file holds [[claim]] tables)");
    for (size_t i = 0; i < doc["claim"].size(); ++i) {
      Reader cr(path);
      const ClaimSpec s = read_claim(cr, doc["claim"][i], mode, i);
      if (auto it = seen.find(s.id); it != seen.end()) cr.fail("id", "\"" + s.id + "\": duplicate (also in " + it->second + ")");
      seen[s.id] = path;
      validate(cr, s);
      out.push_back(compile(s));
    }
  }
  return out;
}

std::vector<Claim> select_claims(const std::vector<std::string>& only, const std::vector<std::string>& claim_files,
                                 const LedgerMode& mode) {
  std::vector<Claim> candidates = all_claims();
  for (Claim& c : load_claim_files(claim_files, mode)) candidates.push_back(std::move(c));
  std::vector<Claim> selected;
  for (Claim& c : candidates)
    if (only.empty() || std::find(only.begin(), only.end(), c.info.id) != only.end()) selected.push_back(std::move(c));
  return selected;
}

}  // namespace scalelab::ledger
