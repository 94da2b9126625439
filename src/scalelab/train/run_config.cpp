#include "scalelab/train/run_config.hpp"

#include <sstream>

#include <toml++/toml.h>

#include "scalelab/core/error.hpp"
#include "scalelab/model/presets.hpp"

namespace scalelab {
namespace {

Json toml_to_json(const toml::node& node) {
  if (auto t = node.as_table()) {
    Json out = Json::object();
    for (auto&& [key, value] : *t) out[std::string(key.str())] = toml_to_json(value);
    return out;
  }
  if (auto a = node.as_array()) {
    Json out = Json::array();
    for (auto&& v : *a) out.push_back(toml_to_json(v));
    return out;
  }
  if (auto v = node.as_integer()) return v->get();
  if (auto v = node.as_floating_point()) return v->get();
  if (auto v = node.as_boolean()) return v->get();
  if (auto v = node.as_string()) return v->get();
  throw_error("config: unsupported TOML value of type ", node.type(),
              " (dates and times are not used)");
}

void to_toml(const Json& j, toml::table& out) {
  for (auto it = j.begin(); it != j.end(); ++it) {
    const Json& v = *it;
    const std::string& k = it.key();
    if (v.is_object()) {
      toml::table sub;
      to_toml(v, sub);
      out.insert(k, std::move(sub));
    } else if (v.is_boolean()) out.insert(k, v.get<bool>());
    else if (v.is_number_integer()) out.insert(k, v.get<int64_t>());
    else if (v.is_number()) out.insert(k, v.get<double>());
    else if (v.is_string()) out.insert(k, v.get<std::string>());
  }
}

void parse_train(ConfigSection s, TrainConfig& c, int64_t d_model) {
  c.steps = s.get_int("steps", c.steps);
  c.batch_size = s.get_int("batch_size", c.batch_size);
  c.length_bucketing = s.get_bool("length_bucketing", c.length_bucketing);
  if (c.steps < 1) s.fail("steps", "must be >= 1");
  if (c.batch_size < 1) s.fail("batch_size", "must be >= 1");
  if (c.batch_size > (int64_t{1} << 20)) s.fail("batch_size", "must be <= 1048576");  // no overflow in batch * length * width
  const std::string opt = s.get_choice("optimizer", "adam", {"adam", "adamw", "sgd"});
  c.optimizer.kind = opt == "adam" ? OptimizerKind::adam
                     : opt == "adamw" ? OptimizerKind::adamw : OptimizerKind::sgd;
  c.optimizer.beta1 = s.get_double("beta1", c.optimizer.beta1);
  c.optimizer.beta2 = s.get_double("beta2", c.optimizer.beta2);
  c.optimizer.eps = s.get_double("eps", c.optimizer.eps);
  c.optimizer.weight_decay = s.get_double("weight_decay", c.optimizer.weight_decay);
  if (!(c.optimizer.beta1 >= 0 && c.optimizer.beta1 < 1)) s.fail("beta1", "must be in [0, 1)");
  if (!(c.optimizer.beta2 >= 0 && c.optimizer.beta2 < 1)) s.fail("beta2", "must be in [0, 1)");
  if (!(c.optimizer.eps > 0)) s.fail("eps", "must be > 0");
  if (!(c.optimizer.weight_decay >= 0)) s.fail("weight_decay", "must be >= 0");
  c.optimizer.mup_base_width = s.get_int("mup_base_width", 0);
  if (c.optimizer.mup_base_width < 0)
    s.fail("mup_base_width", "must be >= 0 (0: off; > 0: muP learning rates relative to this width)");
  c.optimizer.mup_width = d_model;
  const std::string sched = s.get_choice("schedule", "noam", {"noam", "warmup_cosine", "constant"});
  c.schedule.kind = sched == "noam" ? ScheduleKind::noam
                    : sched == "warmup_cosine" ? ScheduleKind::warmup_cosine
                                               : ScheduleKind::constant;
  c.schedule.lr = s.get_double("lr", c.schedule.kind == ScheduleKind::noam ? 1.0 : 1e-3);
  c.schedule.warmup = s.get_int("warmup", 400);
  c.schedule.min_lr = s.get_double("min_lr", 0.0);
  c.schedule.total_steps = c.steps;
  c.schedule.d_model = d_model;
  if (!(c.schedule.lr > 0)) s.fail("lr", "must be > 0");
  if (!(c.schedule.min_lr >= 0)) s.fail("min_lr", "must be >= 0");
  if (c.schedule.warmup < 0) s.fail("warmup", "must be >= 0");
  if (c.schedule.kind == ScheduleKind::noam && c.schedule.warmup < 1)
    s.fail("warmup", "must be >= 1 for the noam schedule");
  c.clip_norm = s.get_double("clip_norm", c.clip_norm);
  if (!(c.clip_norm >= 0)) s.fail("clip_norm", "must be >= 0 (0: off)");
  c.label_smoothing = s.get_double("label_smoothing", c.label_smoothing);
  if (!(c.label_smoothing >= 0 && c.label_smoothing < 1)) s.fail("label_smoothing", "must be in [0, 1)");
  c.eval_every = s.get_int("eval_every", c.eval_every);
  c.eval_examples = s.get_int("eval_examples", c.eval_examples);
  c.checkpoint_every = s.get_int("checkpoint_every", c.checkpoint_every);
  c.snapshot_every = s.get_int("snapshot_every", c.snapshot_every);
  c.log_every = s.get_int("log_every", c.log_every);
  for (const char* k : {"eval_every", "eval_examples", "checkpoint_every", "snapshot_every"})
    if (s.get_int(k, 0) < 0) s.fail(k, "must be >= 0");
  if (c.log_every < 1) s.fail("log_every", "must be >= 1");
  const int64_t seed = s.get_int("seed", 1);
  if (seed < 0) s.fail("seed", "must be >= 0");
  c.seed = static_cast<uint64_t>(seed);
  c.threads = s.get_int("threads", c.threads);
  if (c.threads < 0) s.fail("threads", "must be >= 0 (0: all cores)");
  c.flush_denormals = s.get_bool("flush_denormals", c.flush_denormals);
  c.run_dir = s.get_string("run_dir", c.run_dir);
  if (c.run_dir.empty()) s.fail("run_dir", "must not be empty");
  PrecisionConfig& p = c.precision;
  p.dtype = parse_dtype(s.get_choice("precision", "f32", {"f32", "bf16", "f16"}));
  const std::string scaling = s.get_choice("loss_scale", p.dtype == DType::f16 ? "dynamic" : "none",
                                           {"dynamic", "none"});
  p.dynamic_loss_scale = scaling == "dynamic";
  p.scaler.initial_scale = s.get_double("loss_scale_init", p.scaler.initial_scale);
  p.scaler.growth_interval = s.get_int("loss_scale_window", p.scaler.growth_interval);
  if (!(p.scaler.initial_scale >= p.scaler.min_scale && p.scaler.initial_scale <= p.scaler.max_scale))
    s.fail("loss_scale_init", "must be in [2^-14, 2^24]");
  if (p.scaler.growth_interval < 1) s.fail("loss_scale_window", "must be >= 1");
  // "auto" is resolved here, so the run (summary.json, the config it echoes) records what ran.
  p.matmul = parse_matmul_precision(s.get_choice("matmul_precision", "f32", {"f32", "bf16", "auto"}));
  s.finish();
}

const char* schedule_name(ScheduleKind k) {
  return k == ScheduleKind::noam ? "noam" : k == ScheduleKind::warmup_cosine ? "warmup_cosine" : "constant";
}
const char* optimizer_name(OptimizerKind k) {
  return k == OptimizerKind::adam ? "adam" : k == OptimizerKind::adamw ? "adamw" : "sgd";
}

}  // namespace

Json read_toml_file(const std::string& path) {
  try {
    return toml_to_json(toml::parse_file(path));
  } catch (const toml::parse_error& e) {
    const auto& where = e.source().begin;
    throw_error("config: ", path, ":", where.line, ":", where.column, ": ", e.description());
  }
}

Json read_toml_text(const std::string& text, const std::string& source) {
  try {
    return toml_to_json(toml::parse(text, source));
  } catch (const toml::parse_error& e) {
    const auto& where = e.source().begin;
    throw_error("config: ", source, ":", where.line, ":", where.column, ": ", e.description());
  }
}

void apply_override(Json& tree, const std::string& assignment) {
  const size_t eq = assignment.find('=');
  SL_CHECK(eq != std::string::npos && eq > 0, "--set ", assignment,
           ": expected section.key=value (e.g. model.d_model=256)");
  const std::string path = assignment.substr(0, eq), text = assignment.substr(eq + 1);
  Json value;
  try {
    const toml::table parsed = toml::parse("v = " + text);
    value = toml_to_json(*parsed.get("v"));
  } catch (const std::exception&) {
    value = text;  // a bare word: a string
  }
  Json* node = &tree;
  size_t start = 0;
  while (true) {
    const size_t dot = path.find('.', start);
    const std::string key = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    SL_CHECK(!key.empty(), "--set ", assignment, ": empty key in ", path);
    if (dot == std::string::npos) {
      (*node)[key] = value;
      break;
    }
    Json& child = (*node)[key];
    if (child.is_null()) child = Json::object();
    SL_CHECK(child.is_object(), "--set ", assignment, ": ", path.substr(0, dot), " is not a section");
    node = &child;
    start = dot + 1;
  }
}

RunConfig parse_run_config(const Json& tree) {
  ConfigSection root(&tree, "");
  RunConfig c;
  c.preset = root.get_string("preset", "");
  if (!c.preset.empty()) find_preset(c.preset);  // validates the name
  c.model = parse_model_config(root.subsection("model"));
  c.data = parse_data_config(root.subsection("data"));
  parse_train(root.subsection("train"), c.train, c.model.d_model);
  root.finish();
  return c;
}

Json run_config_to_json(const RunConfig& c) {
  const TrainConfig& t = c.train;
  Json train = {{"steps", t.steps},
                {"batch_size", t.batch_size},
                {"length_bucketing", t.length_bucketing},
                {"optimizer", optimizer_name(t.optimizer.kind)},
                {"beta1", t.optimizer.beta1},
                {"beta2", t.optimizer.beta2},
                {"eps", t.optimizer.eps},
                {"weight_decay", t.optimizer.weight_decay},
                {"mup_base_width", t.optimizer.mup_base_width},
                {"schedule", schedule_name(t.schedule.kind)},
                {"lr", t.schedule.lr},
                {"warmup", t.schedule.warmup},
                {"min_lr", t.schedule.min_lr},
                {"clip_norm", t.clip_norm},
                {"label_smoothing", t.label_smoothing},
                {"eval_every", t.eval_every},
                {"eval_examples", t.eval_examples},
                {"checkpoint_every", t.checkpoint_every},
                {"snapshot_every", t.snapshot_every},
                {"log_every", t.log_every},
                {"seed", t.seed},
                {"threads", t.threads},
                {"flush_denormals", t.flush_denormals},
                {"run_dir", t.run_dir},
                {"precision", dtype_name(t.precision.dtype)},
                {"loss_scale", t.precision.dynamic_loss_scale ? "dynamic" : "none"},
                {"loss_scale_init", t.precision.scaler.initial_scale},
                {"loss_scale_window", t.precision.scaler.growth_interval},
                {"matmul_precision", matmul_precision_name(t.precision.matmul)}};
  Json out = {{"model", model_config_to_json(c.model)}, {"data", data_config_to_json(c.data)},
              {"train", train}};
  if (!c.preset.empty()) out["preset"] = c.preset;
  return out;
}

std::string json_to_toml(const Json& tree) {
  toml::table table;
  to_toml(tree, table);
  std::ostringstream out;
  out << table << "\n";
  return out.str();
}

Json merge_config_sources(const ConfigSources& sources) {
  Json tree = sources.path.empty() ? Json::object() : read_toml_file(sources.path);
  std::string preset = sources.preset;
  if (preset.empty() && tree.contains("preset")) {
    SL_CHECK(tree["preset"].is_string(), "config: preset = ", tree["preset"].dump(),
             ": expected a string (a name listed by `scalelab presets`)");
    preset = tree["preset"].get<std::string>();
  }
  if (!preset.empty()) {
    Json base = {{"model", find_preset(preset).model}};
    base.update(tree, /*merge_objects=*/true);  // the file wins over the preset
    tree = std::move(base);
    tree["preset"] = preset;
  }
  for (const std::string& o : sources.overrides) apply_override(tree, o);
  return tree;
}

RunConfig load_run_config(const ConfigSources& sources) {
  return parse_run_config(merge_config_sources(sources));
}

}  // namespace scalelab
