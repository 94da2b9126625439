#include "scalelab/ledger/runs.hpp"

#include <array>
#include <chrono>
#include <cmath>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>

#include "scalelab/core/cpu.hpp"
#include "scalelab/core/parallel.hpp"
#include "scalelab/kernels/gemm.hpp"
#include "scalelab/kernels/simd_dispatch.hpp"
#include "scalelab/engine_digest.hpp"
#include "scalelab/probes/gradient_probe.hpp"
#include "scalelab/probes/model_probe.hpp"
#include "scalelab/probes/probe_run.hpp"
#include "scalelab/train/trainer.hpp"

namespace scalelab::ledger {
namespace {

// Collects the trainer's records in memory.
class CurveSink : public MetricsSink {
 public:
  void record(const Json& rec) override {
    if (rec.value("split", "") == "train") {
      const Json& g = rec["grad_norm"];
      curve.push_back({rec["step"], rec["loss"], g.is_number() ? g : Json(nullptr)});
      if (rec.contains("rounding")) {  // reduced precision: per-op counts since the last record
        for (const auto& [op, counts] : rec["rounding"].items()) {
          if (!rounding.contains(op)) rounding[op] = Json::object();
          for (const char* field : {"results", "overflow", "nan", "underflow"})
            rounding[op][field] = rounding[op].value(field, 0.0) + counts.value(field, 0.0);
        }
        skipped_steps = rec.value("skipped_steps", int64_t{0});
      }
    } else {
      valid.push_back({rec["step"], rec["nll"], rec["token_accuracy"]});
    }
  }
  Json curve = Json::array(), valid = Json::array(), rounding = Json::object();
  int64_t skipped_steps = 0;
};

// Per-layer gradient norms and attention logit/entropy statistics of one training step; with
// `activations`, also the size (RMS over coordinates) of every sublayer's output f(x) and of the
// residual stream after it, for the coordinate check (docs/claims-file.md, coord_check).
Json observe_step(const StepView& view, bool activations) {
  std::map<std::pair<std::string, int64_t>, double> sq;
  for (Parameter<float>* p : view.model.parameters()) {
    double s = 0;
    for (float g : p->grad) s += double(g) * double(g);
    sq[probes::parameter_location(p->name)] += s;
  }
  Json layers = Json::array();
  for (const auto& [loc, s] : sq) layers.push_back({loc.first, loc.second, std::sqrt(s)});
  probes::ModelProbeOptions po;
  po.per_head = false;
  po.stream_probes = activations;
  po.activation_probes = false;
  probes::ModelProbe<float> probe(view.model, po);
  probe.observe_forward();
  // Per (stack, layer, site): max |logit|, entropy, saturated share, logit variance, share in [-3, 3].
  using Site = std::tuple<std::string, int64_t, std::string>;
  std::map<Site, std::array<double, 5>> stats;
  std::map<Site, std::array<double, 2>> sizes;  // (sublayer rms, residual rms)
  for (const probes::ProbeRecord& r : probe.records(0, view.step)) {
    if (r.head != -1) continue;
    if (r.probe == "sublayer" || r.probe == "residual") {
      auto [it, fresh] = sizes.try_emplace(Site{r.stack, r.layer, r.site});
      if (fresh) it->second.fill(NAN);
      it->second[r.probe == "sublayer" ? 0 : 1] = r.value("rms");
      continue;
    }
    auto [it, fresh] = stats.try_emplace(Site{r.stack, r.layer, r.site});
    if (fresh) it->second.fill(NAN);
    if (r.probe == "attn_logits") {
      it->second[0] = r.value("max_abs");
      it->second[3] = r.value("var");
      it->second[4] = r.value("within_share");
    }
    if (r.probe == "attn_softmax") {
      it->second[1] = r.value("entropy_norm_mean");
      it->second[2] = r.value("saturated_share");
    }
  }
  Json attn = Json::array();
  for (const auto& [site, v] : stats) {
    if (std::isnan(v[0])) continue;  // not an attention site
    attn.push_back({std::get<0>(site), std::get<1>(site), std::get<2>(site), v[0], v[1], v[2], v[3], v[4]});
  }
  Json out = {{"step", view.step}, {"loss", view.loss}, {"grad_layers", layers}, {"attn", attn}};
  if (activations) {
    Json act = Json::array();
    for (const auto& [site, v] : sizes) act.push_back({std::get<0>(site), std::get<1>(site), std::get<2>(site), v[0], v[1]});
    out["act"] = std::move(act);
  }
  return out;
}

Json execute_train(const RunSpec& spec) {
  const RunConfig config = parse_run_config(spec.config);
  const TaskData& data = shared_task_data(config.data);
  Trainer trainer(config, data);
  CurveSink sink;
  Json observations = Json::array();
  TrainerOptions options{.write_run_dir = false, .sink = &sink};
  options.observe_every = spec.options.value("observe_every", int64_t{0});
  const bool activations = spec.options.value("activations", false);
  if (options.observe_every > 0)
    options.observer = [&](const StepView& v) { observations.push_back(observe_step(v, activations)); };
  Json out = {{"diverged", false}, {"diverged_step", -1}};
  const auto t0 = std::chrono::steady_clock::now();
  try {
    const TrainSummary s = trainer.run(options);
    out["final_valid_nll"] = s.valid.nll;
    out["final_valid_accuracy"] = s.valid.token_accuracy;
    out["final_train_loss"] = s.final_train_loss;
  } catch (const Error& e) {
    // Divergence is a result (e.g. an unscaled model at a high learning rate), not a failure.
    if (std::string(e.what()).find("training diverged") == std::string::npos) throw;
    out["diverged"] = true;
    out["diverged_step"] = sink.curve.empty() ? Json(0) : sink.curve.back()[0];
    out["final_valid_nll"] = nullptr;
    out["final_train_loss"] = nullptr;
    out["error"] = e.what();
  }
  out["curve"] = std::move(sink.curve);
  out["valid"] = std::move(sink.valid);
  out["observations"] = std::move(observations);
  if (!sink.rounding.empty()) {
    out["rounding"] = std::move(sink.rounding);
    out["skipped_steps"] = sink.skipped_steps;
  }
  out["seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

Json execute_probe(const RunSpec& spec) {
  RunConfig config = parse_run_config(spec.config);
  const TaskData& data = shared_task_data(config.data);
  config.model = resolve_vocab(config.model, data);
  const Json& o = spec.options;
  probes::ProbeRunOptions po;
  po.seeds = 1;
  po.batches = o.value("batches", int64_t{2});
  po.batch_size = o.value("batch_size", int64_t{0});
  po.split = o.value("split", std::string("valid"));
  po.optimizer_step = o.value("optimizer_step", false);
  po.model.per_head = false;
  if (o.contains("precision")) po.precision = parse_dtype(o["precision"].get<std::string>());
  if (o.value("accumulate", std::string("f32")) != "f32") po.precision_accumulate = *po.precision;
  po.subtract_max = o.value("subtract_max", true);
  const probes::ProbeRunResult r = probes::run_probes(config, data, po);
  Json records = Json::array();
  for (const probes::ProbeRecord& rec : r.records)
    if (rec.head == -1) records.push_back(probes::record_to_json(rec));
  return {{"records", records}, {"first_step_lr", std::isfinite(r.first_step_lr) ? Json(r.first_step_lr) : Json(nullptr)}};
}

std::string compiler_id() {
#if defined(__clang__)
  return "clang " __clang_version__;
#elif defined(__GNUC__)
  return "g++ " __VERSION__;
#else
  return "unknown compiler";
#endif
}

}  // namespace

uint64_t fnv1a(const char* bytes, size_t n, uint64_t h) {
  for (size_t i = 0; i < n; ++i) {
    h ^= static_cast<unsigned char>(bytes[i]);
    h *= 1099511628211ull;
  }
  return h;
}

std::string hex64(uint64_t x) {
  std::ostringstream out;
  out << std::hex;
  out.width(16);
  out.fill('0');
  out << x;
  return out.str();
}

std::string key_digest(const std::string& text) {
  // Two independent 64-bit digests: a collision would need both to collide.
  return hex64(fnv1a(text.data(), text.size(), kFnvOffset)) +
         hex64(fnv1a(text.data(), text.size(), 0x84222325cbf29ce4ull ^ text.size()));
}

const char* run_kind_name(RunKind kind) { return kind == RunKind::train ? "train" : "probe"; }

const std::string& binary_version() {
  // The engine's sources (cmake/engine_digest.cmake); how they were built (compiler and version,
  // build type, flags with sanitizers and fuzzing); the libraries that compute (oneDNN, Highway);
  // and the CPU: oneDNN and the SIMD kernels pick their code paths by CPU, so a cache moved to
  // another machine or another build is not trusted.
  static const std::string version = std::string(SCALELAB_VERSION) + "+" + SCALELAB_ENGINE_DIGEST +
                                     " built by " + compiler_id() + " (" + SCALELAB_BUILD_TYPE + "; " +
                                     SCALELAB_BUILD_FLAGS + ") with " + gemm_backend_description() +
                                     ", " + simd_library_version() + " on " + detect_cpu().model_name;
  return version;
}

std::string RunSpec::key() const {
  const Json k = {{"kind", run_kind_name(kind)}, {"config", config}, {"seed", seed},
                  {"options", options}, {"version", binary_version()}};
  const std::string text = k.dump();
  return key_digest(text);
}

bool diverged(const Json& r) {
  const Json& d = r.is_object() && r.contains("diverged") ? r["diverged"] : Json(false);
  return d.is_boolean() && d.get<bool>();
}

double final_valid_nll(const Json& r) {
  if (diverged(r) || !r.is_object() || !r.contains("final_valid_nll")) return std::nan("");
  const Json& v = r["final_valid_nll"];
  return v.is_number() ? v.get<double>() : std::nan("");
}

Json as_stored(const Json& result) { return Json::parse(result.dump()); }

Json spec_to_json(const RunSpec& spec) {
  return {{"kind", run_kind_name(spec.kind)}, {"config", spec.config}, {"seed", spec.seed},
          {"options", spec.options}, {"label", spec.label}};
}

RunSpec spec_from_json(const Json& j) {
  RunSpec s;
  s.kind = j.at("kind").get<std::string>() == "train" ? RunKind::train : RunKind::probe;
  s.config = j.at("config");
  s.seed = j.at("seed").get<int64_t>();
  s.options = j.at("options");
  s.label = j.at("label").get<std::string>();
  return s;
}

Json resolve_config(const Json& base, const std::vector<std::string>& overrides) {
  Json tree = base;
  for (const std::string& o : overrides) apply_override(tree, o);
  return run_config_to_json(parse_run_config(tree));
}

Json execute_run(const RunSpec& spec) {
  Json config = spec.config;
  config["model"]["seed"] = spec.seed;
  config["train"]["seed"] = spec.seed;
  config["train"]["threads"] = 1;
  RunSpec seeded = spec;
  seeded.config = config;
  const ScopedNumThreads one_thread(1);
  return spec.kind == RunKind::train ? execute_train(seeded) : execute_probe(seeded);
}

const TaskData& shared_task_data(const DataConfig& config) {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<TaskData>> loaded;
  const std::string key = data_config_to_json(config).dump();
  std::lock_guard<std::mutex> lock(mutex);
  auto& slot = loaded[key];
  if (!slot) slot = std::make_unique<TaskData>(load_task(config));
  return *slot;
}

}  // namespace scalelab::ledger
