#include "scalelab/ledger/user_claims.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <optional>
#include <set>

#include "scalelab/core/error.hpp"
#include "scalelab/ledger/builtin_claim_files.hpp"
#include "scalelab/ledger/check.hpp"
#include "scalelab/ledger/criteria_training.hpp"
#include "scalelab/ledger/experiments.hpp"
#include "scalelab/ledger/user_claim_spec.hpp"
#include "scalelab/train/run_config.hpp"

namespace fs = std::filesystem;

namespace scalelab::ledger {
namespace {

using namespace user_claim_detail;

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
  m.points = r.integer(table, "points", "measure.", m.points, 2, 100);
  if (m.name == "f16_overflow") {
    std::vector<std::string> ops = precision_op_names();
    ops.insert(ops.begin(), "all");
    m.op = r.text(table, "op", "measure.", false, m.op);
    if (std::find(ops.begin(), ops.end(), m.op) == ops.end())
      r.fail("measure.op", "\"" + m.op + "\": allowed: " + joined(ops));
    m.when = r.text(table, "when", "measure.", false, m.when);
    if (m.when != "training" && m.when != "init") r.fail("measure.when", "\"" + m.when + "\": allowed: training, init");
  }
  if (m.name == "coord_check") {
    if (!table.contains("widths") || !table["widths"].is_array() || table["widths"].size() < 2)
      r.fail("measure.widths", "missing (coord_check needs an array of at least two d_model values)");
    for (const Json& w : table["widths"]) {
      if (!w.is_number_integer() || w.get<int64_t>() < 1)
        r.fail("measure.widths", value_text(w) + ": expected a positive integer (a d_model)");
      if (!m.widths.empty() && w.get<int64_t>() <= m.widths.back())
        r.fail("measure.widths", value_text(w) + ": the widths must increase");
      m.widths.push_back(w.get<int64_t>());
    }
    m.first_steps = r.integer(table, "steps", "measure.", m.first_steps, 1, 50);
    m.of = r.text(table, "of", "measure.", false, m.of);
    if (m.of != "sublayer" && m.of != "residual") r.fail("measure.of", "\"" + m.of + "\": allowed: sublayer, residual");
  }
  return m;
}

CriterionSpec read_criterion(const Reader& r, const Json& claim, const std::vector<ArmSpec>& arms) {
  if (!claim.contains("criterion")) r.fail("criterion", "missing (a table with kind, arm, than)");
  const Json& t = claim["criterion"];
  r.only_keys(t, "criterion", {"kind", "arm", "than", "at", "margin", "tolerance", "threshold", "text"});
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
  // `arm` is one name or a list: with several, each arm is a case (a condition of the verdict).
  if (t.contains("arm") && t["arm"].is_array()) {
    if (t["arm"].empty()) r.fail("criterion.arm", "an empty list; name at least one arm");
    for (const Json& a : t["arm"]) {
      if (!a.is_string()) r.fail("criterion.arm", value_text(a) + ": expected an arm name");
      const std::string name = a.get<std::string>();
      if (std::find(names.begin(), names.end(), name) == names.end())
        r.fail("criterion.arm", "\"" + name + "\": no such arm; allowed: " + joined(names));
      if (std::find(c.arms.begin(), c.arms.end(), name) != c.arms.end())
        r.fail("criterion.arm", "\"" + name + "\": listed twice");
      c.arms.push_back(name);
    }
  } else {
    c.arms = {arm_named("arm", true)};
  }
  c.than = arm_named("than", c.kind != "diverges");
  for (const std::string& a : c.arms)
    if (!c.than.empty() && c.than == a) r.fail("criterion.than", "\"" + c.than + "\": must differ from criterion.arm");
  c.text = r.text(t, "text", "criterion.", false);
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

SweepSpec read_sweep(const Reader& r, const Json& t) {
  r.only_keys(t, "sweep", {"key", "name", "values", "set", "context"});
  SweepSpec sw;
  sw.key = r.text(t, "key", "sweep.", false);
  sw.name = r.text(t, "name", "sweep.", false, sw.key);
  if (sw.key.empty() && !t.contains("set"))
    r.fail("sweep", "needs a key (a config key set to each value) or set (the overrides of each value), or both");
  if (sw.name.empty()) r.fail("sweep.name", "missing (a sweep without a key names its values, e.g. \"d_k\")");
  if (!t.contains("values") || !t["values"].is_array() || t["values"].empty())
    r.fail("sweep.values", "missing (a non-empty array of values)");
  for (const Json& v : t["values"]) {
    if (v.is_object() || v.is_array()) r.fail("sweep.values", value_text(v) + ": expected a number, string or boolean");
    if (std::find(sw.values.begin(), sw.values.end(), v) != sw.values.end()) r.fail("sweep.values", value_text(v) + ": listed twice");
    sw.values.push_back(v);
  }
  if (t.contains("set")) {
    const Json& set = t["set"];
    if (!set.is_array() || set.size() != sw.values.size())
      r.fail("sweep.set", "expected an array of " + std::to_string(sw.values.size()) +
                              " arrays of \"section.key=value\" strings, one per value of sweep.values");
    for (const Json& with : set) sw.set.push_back(r.strings(Json{{"set", with}}, "set", "sweep."));
  }
  sw.context.assign(sw.values.size(), false);
  if (t.contains("context")) {
    if (!t["context"].is_array()) r.fail("sweep.context", "expected an array of values of sweep.values");
    for (const Json& v : t["context"]) {
      const auto it = std::find(sw.values.begin(), sw.values.end(), v);
      if (it == sw.values.end()) r.fail("sweep.context", value_text(v) + ": not one of sweep.values");
      sw.context[size_t(it - sw.values.begin())] = true;
    }
    if (std::all_of(sw.context.begin(), sw.context.end(), [](bool c) { return c; }))
      r.fail("sweep.context", "every value is context: leave at least one to judge");
  }
  return sw;
}

ClaimSpec read_claim(Reader& r, const Json& claim, const LedgerMode& mode, size_t index, bool builtin) {
  ClaimSpec s;
  s.file = r.file();
  const std::string where = "claim[" + std::to_string(index + 1) + "]";
  if (!claim.is_object()) r.fail(where, "expected a table");
  if (!claim.contains("id") || !claim["id"].is_string()) r.fail(where + ".id", "missing (a string is required)");
  s.id = claim["id"].get<std::string>();
  r.set_claim(s.id);
  if (!valid_id_chars(s.id)) r.fail("id", "\"" + s.id + "\": allowed: letters, digits, - and _");
  if (builtin_shaped_id(s.id) != builtin)
    r.fail("id", builtin ? "\"" + s.id + "\": a built-in claim's file holds an id of the built-in form (E, A or B followed by digits)"
                         : "\"" + s.id + "\": E, A or B followed by digits is a built-in claim's form; choose another id");
  r.only_keys(claim, "", {"id", "statement", "experiment", "base", "arms", "sweep", "seeds", "steps", "measure", "criterion"});
  s.statement = r.text(claim, "statement", "", true);
  s.experiment = r.text(claim, "experiment", "", false);
  s.seeds_from_mode = !claim.contains("seeds");
  s.seeds = r.integer(claim, "seeds", "", mode.train_seeds, 2, 50);

  // Base: a config file (relative to the claim file) or the ledger's own training tree, then a
  // preset's [model], then `set`.
  const Json base = claim.value("base", Json::object());
  r.only_keys(base, "base", {"config", "preset", "set"});
  const std::string config = r.text(base, "config", "base.", false);
  const std::string preset = r.text(base, "preset", "base.", false);
  if (config.empty()) {
    s.tree = training_tree(mode);
    s.ledger_base = true;
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
  if (claim.contains("sweep")) s.sweep = read_sweep(r, claim["sweep"]);
  s.measure = read_measure(r, claim);
  s.criterion = read_criterion(r, claim, s.arms);
  if (s.measure.name == "best_lr" && sweeps_learning_rate(s.sweep))
    r.fail(s.sweep->key == "train.lr" ? "sweep.key" : "sweep.set",
           "train.lr cannot be swept when the measure is best_lr (each arm sweeps its own rates)");
  return s;
}

void validate(const Reader& r, const ClaimSpec& s) {
  if (s.sweep && s.measure.name == "coord_check") {
    if (s.sweep->key == "model.d_model")
      r.fail("sweep.key", "model.d_model cannot be swept when the measure is coord_check (measure.widths sets it)");
    for (const std::vector<std::string>& with : s.sweep->set)
      for (const std::string& o : with)
        if (o.rfind("model.d_model=", 0) == 0)
          r.fail("sweep.set", "\"" + o + "\": model.d_model cannot be swept when the measure is coord_check (measure.widths sets it)");
  }
  for (const ArmSpec& a : s.arms) {
    const Json config = arm_at(r, s, a, nullptr);
    if (s.sweep) {
      if (!s.sweep->key.empty() && (!config_key(config, s.sweep->key) || config_key(config, s.sweep->key)->is_object()))
        r.fail("sweep.key", "\"" + s.sweep->key + "\": not a config key (a [model], [data] or [train] key, e.g. model.d_model; docs/training.md)");
      for (const Json& v : s.sweep->values) arm_runs(r, s, a, &v);
    } else {
      arm_runs(r, s, a, nullptr);
    }
  }
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
      const ClaimSpec s = read_claim(cr, doc["claim"][i], mode, i, /*builtin=*/false);
      if (auto it = seen.find(s.id); it != seen.end()) cr.fail("id", "\"" + s.id + "\": duplicate (also in " + it->second + ")");
      seen[s.id] = path;
      validate(cr, s);
      out.push_back(compile(s));
    }
  }
  return out;
}

std::vector<Claim> builtin_file_claims() {
  std::vector<Claim> out;
  for (const BuiltinClaimFile& f : builtin_claim_files()) {
    const std::string path = "src/scalelab/ledger/claims/" + f.name;
    Reader r(path);
    Json doc;
    try {
      doc = read_toml_text(f.text, path);
    } catch (const Error& e) {
      throw_error(path, ": ", e.what());
    }
    r.only_keys(doc, "", {"claim"});
    if (!doc.contains("claim") || !doc["claim"].is_array() || doc["claim"].size() != 1)
      r.fail("claim", "a built-in claim's file holds exactly one [[claim]] table");
    ClaimSpec s = read_claim(r, doc["claim"][0], LedgerMode{}, 0, /*builtin=*/true);
    if (fs::path(f.name).stem().string() != s.id) r.fail("id", "\"" + s.id + "\": the file of claim " + s.id + " is " + s.id + ".toml");
    s.group = s.id[0] == 'E' ? "embedding" : s.id[0] == 'A' ? "attention" : "beyond";
    // The arms resolve in both modes (the ledger's training config differs between them).
    for (const bool quick : {false, true}) {
      LedgerMode mode;
      mode.quick = quick;
      validate(r, in_mode(s, mode));
    }
    out.push_back(compile(s));
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
