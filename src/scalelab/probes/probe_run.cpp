#include "scalelab/probes/probe_run.hpp"

#include <utility>

#include "scalelab/core/error.hpp"
#include "scalelab/probes/gradient_probe.hpp"
#include "scalelab/probes/precision_probe.hpp"
#include "scalelab/train/loss.hpp"
#include "scalelab/train/optimizer.hpp"

namespace scalelab::probes {

namespace {

ModelInput input_of(const Batch& b, bool encoder_decoder) {
  ModelInput in{.batch = b.size, .src_len = b.src_len, .tgt_len = b.tgt_len, .tgt = b.tgt_in.data()};
  if (encoder_decoder) {
    in.src = b.src.data();
    in.src_lengths = b.src_lengths.data();
  }
  return in;
}

void check_options(const ProbeRunOptions& o) {
  SL_CHECK(o.seeds >= 1, "run_probes: seeds ", o.seeds, ": must be at least 1");
  SL_CHECK(o.batches >= 1, "run_probes: batches ", o.batches, ": must be at least 1");
  SL_CHECK(o.batch_size >= 0, "run_probes: batch_size ", o.batch_size,
           ": must be at least 1 (0: train.batch_size)");
  if (o.precision) {
    SL_CHECK(o.precision_accumulate == DType::f32 || o.precision_accumulate == *o.precision,
             "run_probes: precision_accumulate ", dtype_name(o.precision_accumulate),
             ": must be f32 or the precision (", dtype_name(*o.precision), ")");
  }
}

}  // namespace

const std::vector<Example>& probe_split(const TaskData& data, const std::string& split) {
  if (split == "valid") return data.valid;
  if (split == "test") return data.test;
  if (split == "train") return data.train;
  throw Error("run_probes: split " + split + ": allowed values: valid, test, train");
}

std::vector<Batch> probe_batches(const RunConfig& config, const TaskData& data,
                                 const ProbeRunOptions& options) {
  check_options(options);
  const std::vector<Example>& split = probe_split(data, options.split);
  SL_CHECK(!split.empty(), "run_probes: the ", options.split, " split of data.task ",
           config.data.task, " is empty");
  const bool enc = config.model.arch == Architecture::encoder_decoder;
  const int64_t batch_size = options.batch_size > 0 ? options.batch_size : config.train.batch_size;
  std::vector<Batch> batches = batches_in_order(split, batch_size, batch_layout(data, enc));
  if (static_cast<int64_t>(batches.size()) > options.batches) batches.resize(options.batches);
  return batches;
}

ProbeRunResult run_probes(const RunConfig& config, const TaskData& data,
                          const ProbeRunOptions& options, const Checkpoint* checkpoint) {
  const std::vector<Batch> batches = probe_batches(config, data, options);
  const bool enc = config.model.arch == Architecture::encoder_decoder;
  const int64_t seeds = checkpoint ? 1 : options.seeds;
  const int64_t step = checkpoint ? checkpoint->step : 0;

  ProbeRunResult result;
  result.batches = static_cast<int64_t>(batches.size());
  result.batch_size = options.batch_size > 0 ? options.batch_size : config.train.batch_size;
  result.step = step;

  for (int64_t i = 0; i < seeds; ++i) {
    ModelConfig mc = config.model;
    mc.seed = config.model.seed + static_cast<uint64_t>(i);
    const auto seed = static_cast<int64_t>(mc.seed);
    Transformer<float> model(mc);
    if (checkpoint) load_weights(model, *checkpoint);
    result.attention_scale = model.decoder_blocks().front().self_attention().scale();
    ModelProbe<float> probe(model, options.model);
    probe.arm_kernel_stats();
    model.zero_grad();
    Tensor<float> dlogits;
    double loss = 0, nll = 0, tokens = 0, correct = 0;
    for (const Batch& b : batches) {
      const Tensor<float>& logits = model.forward(input_of(b, enc), ForwardMode{});
      probe.observe_forward();
      dlogits.resize(logits.shape());
      const LossResult l = cross_entropy<float>(logits.data(), b.tgt_out.data(), b.size * b.tgt_len,
                                                mc.tgt_vocab, config.train.label_smoothing,
                                                kPadId, dlogits.data());
      // The gradient of the mean loss over the batches.
      for (float& g : dlogits) g /= static_cast<float>(batches.size());
      model.backward(dlogits.data());
      loss += l.loss * l.tokens;
      nll += l.nll * l.tokens;
      tokens += l.tokens;
      correct += l.correct;
    }
    probe.disarm_kernel_stats();

    // The model still holds the last batch's forward tensors: replay its ops in the format.
    std::vector<ProbeRecord> precision_records;
    if (options.precision) {
      PrecisionProbeOptions pp;
      pp.dtype = *options.precision;
      pp.accumulate = options.precision_accumulate;
      pp.subtract_max = options.subtract_max;
      precision_records = probe_precision(model, pp, seed, step);
      for (const ProbeRecord& r : precision_records) add_counts(r, result.precision_totals);
    }

    GradientProbe<float> grads;
    grads.before_step(model.parameters());
    double lr = NAN;
    if (options.optimizer_step) {
      Optimizer<float> optimizer(model.parameters(), config.train.optimizer);
      clip_grad_norm(optimizer.params(), config.train.clip_norm);
      lr = learning_rate(config.train.schedule, 1);
      optimizer.step(lr);
      grads.after_step(model.parameters());
      result.first_step_lr = lr;
    }

    std::vector<ProbeRecord> rs = probe.records(seed, step);
    for (ProbeRecord& r : precision_records) rs.push_back(std::move(r));
    for (ProbeRecord& r : grads.records(seed, step)) rs.push_back(std::move(r));
    ProbeRecord loss_record;
    loss_record.probe = "loss";
    loss_record.site = options.split;
    loss_record.seed = seed;
    loss_record.step = step;
    loss_record.values = {{"loss", loss / tokens}, {"nll", nll / tokens}, {"tokens", tokens},
                          {"token_accuracy", correct / tokens}, {"step_lr", lr}};
    rs.push_back(std::move(loss_record));
    for (ProbeRecord& r : rs) {
      for (const auto& [key, value] : options.tags) r.tags[key] = value;
      result.records.push_back(std::move(r));
    }
  }
  return result;
}

}  // namespace scalelab::probes
