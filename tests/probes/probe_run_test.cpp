// run_probes, the probe experiment as a library call, on the copy task with a tiny model: records
// for model.seed, model.seed + 1, ...; an attn_softmax record per attention layer; a "loss" record
// per seed with the NLL near ln V at initialisation; the same records on a second call; and the
// emulated-precision replay counted when asked for.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <sstream>
#include <tuple>

#include "scalelab/core/error.hpp"
#include "scalelab/probes/probe_run.hpp"
#include "scalelab/train/trainer.hpp"

namespace scalelab::probes {
namespace {

RunConfig tiny_copy_config() {
  RunConfig c;
  c.data.task = "copy";
  c.data.train_size = 40;
  c.data.valid_size = 24;
  c.model.d_model = 32;
  c.model.n_heads = 2;
  c.model.d_ff = 48;
  c.model.encoder_layers = 1;
  c.model.decoder_layers = 1;
  c.model.max_len = 32;
  c.model.seed = 7;
  c.train.batch_size = 8;
  return c;
}

struct Fixture {
  RunConfig config = tiny_copy_config();
  TaskData data;
  Fixture() {
    data = load_task(config.data);
    config.model = resolve_vocab(config.model, data);
  }
};

std::string jsonl_of(const std::vector<ProbeRecord>& records) {
  std::ostringstream out;
  write_jsonl(out, records);
  return out.str();
}

TEST(ProbeRun, RecordsPerSeedLayerAndLoss) {
  const Fixture f;
  ProbeRunOptions o;
  o.seeds = 2;
  o.tags = {{"run", "test"}};
  const ProbeRunResult r = run_probes(f.config, f.data, o);

  EXPECT_EQ(r.batches, 2);
  EXPECT_EQ(r.batch_size, 8);
  EXPECT_EQ(r.step, 0);
  EXPECT_TRUE(std::isfinite(r.first_step_lr));
  EXPECT_GT(r.first_step_lr, 0);
  ASSERT_FALSE(r.records.empty());

  std::set<int64_t> seeds;
  for (const ProbeRecord& rec : r.records) {
    seeds.insert(rec.seed);
    EXPECT_EQ(rec.step, 0);
    EXPECT_EQ(rec.tags, o.tags);
  }
  EXPECT_EQ(seeds, (std::set<int64_t>{7, 8}));

  const double ln_v = std::log(static_cast<double>(f.config.model.tgt_vocab));
  for (int64_t seed : {7, 8}) {
    // One all-heads attn_softmax record per attention sublayer: encoder 0 self, decoder 0 self
    // and cross.
    std::set<std::tuple<std::string, int64_t, std::string>> softmax;
    int losses = 0;
    for (const ProbeRecord& rec : r.records) {
      if (rec.seed != seed) continue;
      if (rec.probe == "attn_softmax" && rec.head == -1) {
        EXPECT_TRUE(softmax.emplace(rec.stack, rec.layer, rec.site).second)
            << rec.stack << " " << rec.layer << " " << rec.site;
      }
      if (rec.probe == "loss") {
        ++losses;
        EXPECT_EQ(rec.site, "valid");
        // At initialisation the predictions are close to uniform over the target vocabulary (the
        // logits' variance of about 1 adds roughly half of it: 3.05 against ln 14 = 2.64 here).
        EXPECT_NEAR(rec.value("nll"), ln_v, 0.25 * ln_v) << "seed " << seed;
        EXPECT_GT(rec.value("tokens"), 0);
        EXPECT_DOUBLE_EQ(rec.value("step_lr"), r.first_step_lr);
      }
    }
    const std::set<std::tuple<std::string, int64_t, std::string>> want{
        {"encoder", 0, "self_attn"}, {"decoder", 0, "self_attn"}, {"decoder", 0, "cross_attn"}};
    EXPECT_EQ(softmax, want) << "seed " << seed;
    EXPECT_EQ(losses, 1) << "seed " << seed;
  }

  // No precision replay asked for: nothing counted.
  int64_t results = 0;
  for (const OpCounts& c : r.precision_totals.ops) results += c.results;
  EXPECT_EQ(results, 0);
}

TEST(ProbeRun, TwoCallsGiveIdenticalRecords) {
  const Fixture f;
  ProbeRunOptions o;
  o.seeds = 2;
  const ProbeRunResult a = run_probes(f.config, f.data, o);
  const ProbeRunResult b = run_probes(f.config, f.data, o);
  ASSERT_EQ(a.records.size(), b.records.size());
  EXPECT_EQ(jsonl_of(a.records), jsonl_of(b.records));
  EXPECT_EQ(a.first_step_lr, b.first_step_lr);
}

TEST(ProbeRun, NoStepGivesNoUpdateAndANanLearningRate) {
  const Fixture f;
  ProbeRunOptions o;
  o.seeds = 1;
  o.batches = 1;
  o.optimizer_step = false;
  const ProbeRunResult r = run_probes(f.config, f.data, o);
  EXPECT_TRUE(std::isnan(r.first_step_lr));
  EXPECT_EQ(r.batches, 1);
  bool saw_grad = false;
  for (const ProbeRecord& rec : r.records) {
    if (rec.probe == "loss") {
      EXPECT_TRUE(std::isnan(rec.value("step_lr")));
    }
    if (rec.probe == "grad") {
      saw_grad = true;
      EXPECT_TRUE(std::isnan(rec.value("update_ratio")) || rec.values.count("update_ratio") == 0)
          << rec.site;
    }
  }
  EXPECT_TRUE(saw_grad);
}

TEST(ProbeRun, PrecisionReplayCountsResults) {
  const Fixture f;
  ProbeRunOptions o;
  o.seeds = 2;
  o.batches = 1;
  o.precision = DType::f16;
  const ProbeRunResult r = run_probes(f.config, f.data, o);
  int64_t results = 0;
  for (const OpCounts& c : r.precision_totals.ops) results += c.results;
  EXPECT_GT(results, 0);
  std::set<int64_t> seeds;
  for (const ProbeRecord& rec : r.records)
    if (rec.probe == "precision") seeds.insert(rec.seed);
  EXPECT_EQ(seeds, (std::set<int64_t>{7, 8}));
}

TEST(ProbeRun, RejectsBadOptions) {
  const Fixture f;
  ProbeRunOptions o;
  o.split = "dev";
  EXPECT_THROW(run_probes(f.config, f.data, o), Error);
  o = {};
  o.seeds = 0;
  EXPECT_THROW(run_probes(f.config, f.data, o), Error);
  o = {};
  o.batches = 0;
  EXPECT_THROW(run_probes(f.config, f.data, o), Error);
}

}  // namespace
}  // namespace scalelab::probes
