// scalelab probe: the flags of the probe experiment (probes/probe_run.hpp: models at initialisation
// over several seeds, or a checkpoint, run on real batches of the task with every probe observing,
// one optimiser step for the update/parameter ratio). Prints per-layer tables (median and spread
// over seeds); with --out, writes the samples (probes.jsonl, docs/probes.md) and the spread over
// seeds (summary.json).
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

#include "commands.hpp"
#include "scalelab/core/atomic_file.hpp"
#include "loaded_run.hpp"
#include "scalelab/core/parallel.hpp"
#include "scalelab/model/checkpoint.hpp"
#include "scalelab/probes/probe_run.hpp"
#include "scalelab/probes/table.hpp"
#include "scalelab/train/trainer.hpp"

namespace scalelab::cli {

namespace {

// The flags: those the library takes as they are live in `run` (seeds, batches, batch size, split,
// the row thresholds); the rest are parsed into it by run_options.
struct ProbeArgs {
  ConfigSources config;
  probes::ProbeRunOptions run;
  std::string out;
  bool no_step = false;
  bool no_heads = false;
  std::string logit_bins;    // "lo,hi,n"
  int64_t entropy_bins = 0;  // uniform bins over [0, 1]
  std::vector<std::string> tags;
  std::string checkpoint;                    // probe a trained model instead of fresh inits
  std::string precision;                     // "" | f16 | bf16
  std::string precision_accumulate = "f32";  // f32 | format
  bool no_max_subtraction = false;
};

std::vector<double> parse_logit_bins(const std::string& spec) {
  double lo = 0, hi = 0;
  long long n = 0;
  char c1 = 0, c2 = 0;
  std::istringstream in(spec);
  in >> lo >> c1 >> hi >> c2 >> n;
  SL_CHECK(in && in.peek() == EOF && c1 == ',' && c2 == ',',
           "--logit-bins ", spec, ": expected lo,hi,n (e.g. -10,10,40)");
  SL_CHECK(n >= 1 && n <= 10000 && hi > lo, "--logit-bins ", spec,
           ": need lo < hi and 1 <= n <= 10000");
  return probes::Histogram::uniform(lo, hi, n).edges();
}

std::map<std::string, std::string> parse_tags(const std::vector<std::string>& tags) {
  std::map<std::string, std::string> out;
  for (const std::string& t : tags) {
    const size_t eq = t.find('=');
    SL_CHECK(eq != std::string::npos && eq > 0, "--tag ", t, ": expected key=value");
    out[t.substr(0, eq)] = t.substr(eq + 1);
  }
  return out;
}

void check_args(const ProbeArgs& a) {
  const probes::ProbeRunOptions& r = a.run;
  const probes::SoftmaxThresholds& t = r.model.attention.thresholds;
  SL_CHECK(r.seeds >= 1 && r.seeds <= 1000, "--seeds ", r.seeds, ": must be in 1..1000");
  SL_CHECK(r.batches >= 1 && r.batches <= 10000, "--batches ", r.batches, ": must be in 1..10000");
  SL_CHECK(r.batch_size >= 0 && r.batch_size <= 100000, "--batch-size ", r.batch_size,
           ": must be in 1..100000 (0: train.batch_size)");
  SL_CHECK(r.split == "valid" || r.split == "test" || r.split == "train", "--split ", r.split,
           ": allowed values: valid, test, train");
  SL_CHECK(a.entropy_bins >= 0 && a.entropy_bins <= 10000, "--entropy-bins ", a.entropy_bins,
           ": must be in 0..10000");
  SL_CHECK(t.saturated > 0 && t.saturated < 1, "--saturated ", t.saturated, ": must be in (0, 1)");
  SL_CHECK(t.near_uniform > 0 && t.near_uniform < 1, "--near-uniform ", t.near_uniform,
           ": must be in (0, 1)");
}

// The library's options: the flags bound in a.run, plus those that needed parsing.
probes::ProbeRunOptions run_options(const ProbeArgs& a) {
  probes::ProbeRunOptions opt = a.run;
  opt.optimizer_step = !a.no_step;
  opt.model.per_head = !a.no_heads;
  if (!a.logit_bins.empty()) opt.model.attention.logit_edges = parse_logit_bins(a.logit_bins);
  if (a.entropy_bins > 0)
    opt.model.attention.entropy_edges = probes::Histogram::uniform(0, 1, a.entropy_bins).edges();
  if (!a.precision.empty()) {
    opt.precision = parse_dtype(a.precision);
    opt.precision_accumulate = a.precision_accumulate == "f32" ? DType::f32 : *opt.precision;
    opt.subtract_max = !a.no_max_subtraction;
  }
  opt.tags = parse_tags(a.tags);
  return opt;
}

// The output files, refused before any work if either exists.
struct OutFiles {
  std::filesystem::path jsonl, summary;
};
OutFiles prepare_out(const std::string& dir) {
  namespace fs = std::filesystem;
  const fs::path d(dir);
  SL_CHECK(!fs::exists(d) || fs::is_directory(d), "--out ", dir, ": exists and is not a directory");
  OutFiles f{d / "probes.jsonl", d / "summary.json"};
  for (const fs::path& p : {f.jsonl, f.summary})
    SL_CHECK(!fs::exists(p), "--out ", dir, ": ", p.string(),
             " exists (scalelab never overwrites; choose another directory)");
  fs::create_directories(d);
  return f;
}


void run_probe(const ProbeArgs& a) {
  check_args(a);
  const probes::ProbeRunOptions opt = run_options(a);
  const std::string& split = opt.split;
  // At initialisation (config, preset, --set, seeds) or at a trained step (--checkpoint).
  std::optional<Checkpoint> checkpoint;
  RunConfig config;
  if (!a.checkpoint.empty()) {
    SL_CHECK(a.config.path.empty() && a.config.preset.empty() && a.config.overrides.empty(),
             "--checkpoint takes its config from the checkpoint: drop --config, --preset and --set");
    checkpoint = read_checkpoint(a.checkpoint);
    config = parse_run_config(checkpoint->run_config);
  } else {
    config = load_run_config(a.config);
  }
  const int64_t seeds = checkpoint ? 1 : opt.seeds;
  const int64_t step = checkpoint ? checkpoint->step : 0;
  const OutFiles files = a.out.empty() ? OutFiles{} : prepare_out(a.out);
  if (config.train.threads > 0) set_num_threads(static_cast<int>(config.train.threads));
  const TaskData data = load_task(config.data);
  config.model = resolve_vocab(config.model, data);
  const bool enc = config.model.arch == Architecture::encoder_decoder;
  SL_CHECK(!probes::probe_split(data, split).empty(), "the ", split, " split of ",
           task_label(config.data), " is empty");

  // The plan first (run_probes runs these same batches), so the header shows before the work.
  const int64_t n_batches = static_cast<int64_t>(probes::probe_batches(config, data, opt).size());
  const int64_t batch_size = opt.batch_size > 0 ? opt.batch_size : config.train.batch_size;
  const ModelConfig& m = config.model;
  std::cout << "scalelab probe: " << task_label(config.data) << ", " << split << " split, "
            << n_batches << " batch(es) of up to " << batch_size << ", "
            << (checkpoint ? "checkpoint " + a.checkpoint + " at step " + std::to_string(step)
                           : std::to_string(seeds) + " seed(s) from model.seed = " + std::to_string(m.seed)) << (config.preset.empty() ? "" : ", preset ")
            << config.preset << "\nmodel: d_model " << m.d_model << ", " << m.n_heads
            << " heads (d_k " << m.head_dim() << "), layers " << (enc ? m.encoder_layers : 0)
            << "+" << m.decoder_layers << ", embedding scale " << m.embedding.scale_value << "\n";

  const probes::ProbeRunResult run =
      probes::run_probes(config, data, opt, checkpoint ? &*checkpoint : nullptr);
  const std::vector<probes::ProbeRecord>& records = run.records;

  std::vector<probes::ProbeRecord> all_heads;
  for (const probes::ProbeRecord& r : records)
    if (r.head == -1) all_heads.push_back(r);
  const probes::SeedSummary summary(all_heads);
  const probes::SeedSpread* nll = summary.find("loss", "model", -1, split, -1, "nll", step);
  // The scale as the model resolved it (nn), not recomputed here.
  std::cout << "attention scale " << run.attention_scale
            << (m.attention.scale_query      ? " on q"
                : m.attention.fold_into_init ? " folded into W_q's initialisation"
                                             : " on the logits") << "\n";
  std::cout << (checkpoint ? "loss: " : "loss at init: ") << probes::format_cell(nll) << " nats/token (ln V = "
            << std::log(static_cast<double>(m.tgt_vocab)) << ")"
            << (a.no_step ? "" : ", first step's learning rate " + probes::format_number(run.first_step_lr)) << "\n";
  probes::print_probe_tables(std::cout, summary, step);
  if (!a.precision.empty()) {
    std::cout << "\n" << a.precision << " replay of the last batch (accumulating in "
              << a.precision_accumulate << (a.no_max_subtraction ? ", softmax without max subtraction" : "")
              << "), all seeds and layers:\n" << run.precision_totals.summary();
  }

  if (!a.out.empty()) {
    std::ostringstream jsonl;
    probes::write_jsonl(jsonl, records);
    write_file_atomically(files.jsonl.string(), jsonl.str());
    Json s = summary.to_json();
    s["config"] = run_config_to_json(config);
    s["probe"] = {{"seeds", opt.seeds}, {"batches", run.batches},
                  {"batch_size", run.batch_size}, {"split", split}, {"optimizer_step", opt.optimizer_step},
                  {"records", static_cast<int64_t>(records.size())}, {"tags", opt.tags}};
    write_file_atomically(files.summary.string(), s.dump(1) + "\n");
    std::cout << "\nwrote " << files.jsonl.string() << " (" << records.size() << " records) and "
              << files.summary.string() << "\n";
  }
}

}  // namespace

void add_probe(CLI::App& app) {
  auto a = std::make_shared<ProbeArgs>();
  CLI::App* cmd = app.add_subcommand(
      "probe", "Probe a model at initialisation over seeds on real batches: attention logits and "
               "softmax, residual variance, token/position variance, gradients, f16 headroom");
  cmd->add_option("--config,-c", a->config.path, "TOML config file (configs/*.toml)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--preset,-p", a->config.preset,
                  "start [model] from a preset (scalelab presets lists them); the config and --set win");
  cmd->add_option("--set", a->config.overrides,
                  "override a config value: section.key=value (repeatable), e.g. model.d_model=256");
  cmd->add_option("--checkpoint", a->checkpoint,
                  "probe this trained checkpoint (its config, one model) instead of models at init");
  cmd->add_option("--seeds", a->run.seeds, "models to probe, with model.seed, model.seed + 1, ...")
      ->capture_default_str();
  cmd->add_option("--batches", a->run.batches, "batches of the split to run through each model")
      ->capture_default_str();
  cmd->add_option("--batch-size", a->run.batch_size, "examples per batch (0: train.batch_size)")
      ->capture_default_str();
  cmd->add_option("--split", a->run.split, "valid, test or train")->capture_default_str();
  cmd->add_option("--out,-o", a->out,
                  "directory for probes.jsonl and summary.json (never overwritten)");
  cmd->add_flag("--no-step", a->no_step, "skip the optimiser step (no update/parameter ratio)");
  cmd->add_flag("--no-heads", a->no_heads, "write only all-heads attention records, not per head");
  cmd->add_option("--logit-bins", a->logit_bins,
                  "histogram the attention logits over n equal bins in [lo, hi]: lo,hi,n");
  cmd->add_option("--entropy-bins", a->entropy_bins,
                  "histogram the rows' normalised entropy over n equal bins in [0, 1]")
      ->capture_default_str();
  cmd->add_option("--saturated", a->run.model.attention.thresholds.saturated, "a row is saturated when max p > this")
      ->capture_default_str();
  cmd->add_option("--near-uniform", a->run.model.attention.thresholds.near_uniform,
                  "a row is near-uniform when its normalised entropy >= this")
      ->capture_default_str();
  cmd->add_option("--precision", a->precision,
                  "also replay each op in an emulated format and count overflows: f16 or bf16")
      ->check(CLI::IsMember({"f16", "bf16"}));
  cmd->add_option("--precision-accumulate", a->precision_accumulate,
                  "where the emulated sums accumulate: f32 or format")
      ->check(CLI::IsMember({"f32", "format"}))->capture_default_str();
  cmd->add_flag("--no-max-subtraction", a->no_max_subtraction,
                "emulated softmax without subtracting the row maximum");
  cmd->add_option("--tag", a->tags, "key=value label copied into every record (repeatable)");
  cmd->callback([a] { run_probe(*a); });
}

}  // namespace scalelab::cli
