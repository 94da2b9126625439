#include "scalelab/train/trainer.hpp"

#include <array>
#include <bit>
#include <chrono>
#include <cmath>
#include <limits>
#include <sstream>

#include "scalelab/core/denormals.hpp"
#include "scalelab/core/parallel.hpp"
#include "scalelab/kernels/gemm.hpp"
#include "scalelab/model/checkpoint.hpp"
#include "scalelab/train/decode.hpp"
#include "scalelab/train/loss.hpp"
#include "scalelab/train/progress.hpp"
#include "scalelab/train/run_dir.hpp"


namespace scalelab {
namespace {

ModelInput model_input(const Batch& b) {
  return {.batch = b.size, .src_len = b.src_len, .tgt_len = b.tgt_len,
          .src = b.src.empty() ? nullptr : b.src.data(),
          .src_lengths = b.src_lengths.empty() ? nullptr : b.src_lengths.data(),
          .tgt = b.tgt_in.data()};
}

// What to change after a divergence, fitted to the config (no advice to enable what is on).
std::string divergence_advice(const TrainConfig& tc) {
  std::ostringstream out;
  out << "lower train.lr (now " << tc.schedule.lr << ")";
  if (tc.clip_norm > 0) out << "; train.clip_norm = " << tc.clip_norm << " is already on";
  else out << " or enable train.clip_norm";
  return out.str();
}

// Index of the first inf or NaN in [data, data + n), -1 if none. The per-step pass tests the
// exponent bits with integer ops, which vectorise (a float sum would be one long dependency
// chain: about 7 % of a copy-task step); the element is searched only on the error path.
int64_t first_non_finite(const float* data, int64_t n) {
  uint32_t bad = 0;
  for (int64_t i = 0; i < n; ++i)
    bad |= (std::bit_cast<uint32_t>(data[i]) & 0x7f800000u) == 0x7f800000u;
  if (!bad) return -1;
  for (int64_t i = 0; i < n; ++i)
    if (!std::isfinite(data[i])) return i;
  return -1;
}

// {op: {results, overflow, nan, underflow, subnormal, max_abs}} for the ops with any result.
Json counters_to_json(const OverflowCounters& c) {
  Json out = Json::object();
  for (int i = 0; i < kPrecisionOps; ++i) {
    const OpCounts& o = c.ops[i];
    if (o.results == 0) continue;
    out[precision_op_name(static_cast<PrecisionOp>(i))] = {
        {"results", o.results}, {"overflow", o.overflow},   {"nan", o.nan},
        {"underflow", o.underflow}, {"subnormal", o.subnormal}, {"max_abs", o.max_abs}};
  }
  return out;
}

// What a divergence error says about the checkpoint the run leaves.
std::string checkpoint_note(bool on_disk, int64_t last_saved) {
  if (!on_disk) return "";
  return last_saved > 0 ? "; checkpoint.safetensors keeps step " + std::to_string(last_saved)
                        : "; no checkpoint was written";
}

}  // namespace

ModelConfig resolve_vocab(ModelConfig model, const TaskData& data) {
  if (model.src_vocab == 0) model.src_vocab = data.src_vocab.size();
  if (model.tgt_vocab == 0) model.tgt_vocab = data.tgt_vocab.size();
  SL_CHECK(model.tgt_vocab >= data.tgt_vocab.size(), "model.tgt_vocab = ", model.tgt_vocab,
           " is smaller than the data's target vocabulary (", data.tgt_vocab.size(), ")");
  if (model.arch == Architecture::encoder_decoder) {
    SL_CHECK(data.has_source, "model.arch = encoder_decoder needs a task with sources; data.task "
                              "is a language-modelling task (use model.arch = decoder_only)");
    SL_CHECK(model.src_vocab >= data.src_vocab.size(), "model.src_vocab = ", model.src_vocab,
             " is smaller than the data's source vocabulary (", data.src_vocab.size(), ")");
  }
  return model;
}

EvalResult evaluate(Transformer<float>& model, const TaskData& data,
                    const std::vector<Example>& examples, int64_t batch_size,
                    int64_t exact_match_examples, Comm* comm) {
  const int rank = comm ? comm->rank() : 0, ranks = comm ? comm->size() : 1;
  EvalResult r;
  double loss_sum = 0, nll_sum = 0;
  int64_t correct = 0;
  const bool with_source = model.config().arch == Architecture::encoder_decoder;
  int64_t k = 0;
  for (const Batch& b : batches_in_order(examples, batch_size, batch_layout(data, with_source))) {
    if (k++ % ranks != rank) continue;  // round-robin over the ranks
    const Tensor<float>& logits = model.forward(model_input(b), ForwardMode{});
    const LossResult l = cross_entropy<float>(logits.data(), b.tgt_out.data(), b.size * b.tgt_len,
                                              model.config().tgt_vocab, 0.0, kPadId, nullptr);
    loss_sum += l.loss * l.tokens;
    nll_sum += l.nll * l.tokens;
    correct += l.correct;
    r.tokens += l.tokens;
  }
  const bool with_em = with_source && exact_match_examples > 0;
  if (ranks > 1) {
    // Sums over the ranks; exact match over each rank's contiguous share of the examples.
    double em_count = 0, em_n = 0;
    if (with_em) {
      const int64_t n = std::min<int64_t>(examples.size(), exact_match_examples);
      const int64_t begin = n * rank / ranks, end = n * (rank + 1) / ranks;
      const std::vector<Example> subset(examples.begin() + begin, examples.begin() + end);
      if (!subset.empty()) em_count = exact_match(model, subset, batch_size) * double(subset.size());
      em_n = double(n);
    }
    double sums[4] = {loss_sum, nll_sum, double(correct), double(r.tokens)};
    comm->allreduce_sum(sums, 4);
    comm->allreduce_sum(&em_count, 1);
    loss_sum = sums[0], nll_sum = sums[1], correct = int64_t(sums[2]), r.tokens = int64_t(sums[3]);
    if (with_em) r.exact_match = em_n > 0 ? em_count / em_n : 0;
  }
  // No token would report a loss of 0 nats, a perfect score.
  SL_CHECK(r.tokens > 0, "cannot evaluate an empty split (", examples.size(), " examples, no target token)");
  r.loss = r.tokens ? loss_sum / r.tokens : 0;
  r.nll = r.tokens ? nll_sum / r.tokens : 0;
  r.token_accuracy = r.tokens ? double(correct) / r.tokens : 0;
  if (with_em && ranks == 1) {
    const size_t n = std::min<size_t>(examples.size(), exact_match_examples);
    const std::vector<Example> subset(examples.begin(), examples.begin() + n);
    r.exact_match = exact_match(model, subset, batch_size);
  }
  return r;
}

Trainer::Trainer(const RunConfig& config, const TaskData& data)
    : config_(config),
      data_(data),
      model_((config_.model = resolve_vocab(config.model, data), config_.model)),
      optimizer_(model_.parameters(), config.train.optimizer) {
  const PrecisionConfig& p = config_.train.precision;
  rounding_ = {.dtype = p.dtype, .counters = &counters_};
  if (p.dynamic_loss_scale) scaler_.emplace(p.scaler);
}

void Trainer::round_weights_to_format() {
  const auto& params = optimizer_.params();
  master_.resize(params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    master_[i] = params[i]->value;  // f32 master copy
    round_tensor(&rounding_, params[i]->value.data(), params[i]->value.numel(),
                 PrecisionOp::input_cast);
  }
}

void Trainer::restore_master_weights_and_round_grads() {
  const auto& params = optimizer_.params();
  for (size_t i = 0; i < params.size(); ++i) {
    std::swap(params[i]->value, master_[i]);
    round_tensor(&rounding_, params[i]->grad.data(), params[i]->grad.numel(),
                 PrecisionOp::weight_grad);
  }
}

Trainer::StepResult Trainer::train_step(const Batch& batch, int64_t global_tokens, int64_t step,
                                        double lr, const TrainerOptions& options) {
  const bool parallel = comm_->size() > 1;
  Rng dropout_rng(config_.train.seed * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(step) +
                  (parallel ? static_cast<uint64_t>(comm_->rank()) * 0xD1B54A32D192ED03ull : 0));
  const bool reduced = rounding_.dtype != DType::f32;
  model_.zero_grad();
  if (reduced) round_weights_to_format();
  const Tensor<float>& logits = model_.forward(
      model_input(batch), ForwardMode{.training = true, .rng = &dropout_rng,
                                      .rounding = reduced ? &rounding_ : nullptr});
  dlogits_.resize(logits.shape());
  const LossResult l = cross_entropy<float>(logits.data(), batch.tgt_out.data(),
                                            batch.size * batch.tgt_len, model_.config().tgt_vocab,
                                            config_.train.label_smoothing, kPadId, dlogits_.data());
  // backward of S · loss (rounded to the format inside the model's backward); data parallel: of
  // this rank's share n_r / n of the global mean (data_parallel.hpp), so the ranks' sum is exact.
  const double share = !parallel ? 1.0 : global_tokens > 0 ? double(l.tokens) / double(global_tokens) : 0.0;
  if (scaler_ || parallel) {
    const float s = static_cast<float>((scaler_ ? scaler_->scale() : 1.0) * share);
    for (float& g : dlogits_) g *= s;
  }
  model_.backward(dlogits_.data());
  StepResult r{.loss = l.loss, .nll = l.nll};
  if (parallel) {  // the global batch's gradient and mean loss on every rank
    const auto c0 = std::chrono::steady_clock::now();
    allreduce_.run(*comm_, optimizer_.params());
    allreduce_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - c0).count();
    double sums[3] = {l.loss * double(l.tokens), l.nll * double(l.tokens), double(l.tokens)};
    comm_->allreduce_sum(sums, 3);
    r.loss = sums[2] > 0 ? sums[0] / sums[2] : 0.0;
    r.nll = sums[2] > 0 ? sums[1] / sums[2] : 0.0;
  }
  if (options.observer && options.observe_every > 0 &&
      (step == 1 || step % options.observe_every == 0)) {
    options.observer(StepView{.step = step, .loss = r.loss, .model = model_});
  }
  if (reduced) restore_master_weights_and_round_grads();
  if (scaler_) {
    bool overflow = false;
    for (const Parameter<float>* p : optimizer_.params())
      overflow = overflow || DynamicLossScaler::has_overflow(p->grad.data(), p->grad.numel());
    if (!overflow) {  // by the scale the backward used: before update(), which may grow it
      for (Parameter<float>* p : optimizer_.params())
        scaler_->unscale(p->grad.data(), p->grad.numel());
    }
    r.applied = scaler_->update(overflow);
    if (!r.applied) {
      r.grad_norm = std::numeric_limits<double>::quiet_NaN();
      return r;
    }
  }
  r.grad_norm = clip_grad_norm(optimizer_.params(), config_.train.clip_norm);
  optimizer_.step(lr);
  return r;
}

void Trainer::save(const std::string& path, int64_t step) {
  std::vector<TensorRef> extra;
  const auto& params = optimizer_.params();
  for (size_t i = 0; i < params.size(); ++i) {
    extra.push_back({"optimizer.m." + params[i]->name, params[i]->value.shape(),
                     optimizer_.first_moments()[i].data()});
    extra.push_back({"optimizer.v." + params[i]->name, params[i]->value.shape(),
                     optimizer_.second_moments()[i].data()});
  }
  // [scale, steps, skipped, clean run]: exact in float (scale is a power of two <= 2^24).
  Tensor<float> scaler_state({4});
  if (scaler_) {
    const LossScalerState st = scaler_->state();
    scaler_state[0] = float(st.scale), scaler_state[1] = float(st.steps);
    scaler_state[2] = float(st.skipped), scaler_state[3] = float(st.clean_run);
    extra.push_back({"loss_scaler.state", scaler_state.shape(), scaler_state.data()});
  }
  save_checkpoint(path, model_, run_config_to_json(config_), step, {.tensors = extra, .metadata = {}});
}

void Trainer::check_finite(int64_t step, const StepResult& r, const std::string& kept) const {
  if (!r.applied) return;  // a step the loss scaler skipped changed nothing
  // Gradients first: a non-finite one is the cause, non-finite weights its consequence.
  for (const bool grads : {true, false}) {
    for (const Parameter<float>* p : optimizer_.params()) {
      const Tensor<float>& t = grads ? p->grad : p->value;
      const int64_t i = first_non_finite(t.data(), t.numel());
      if (i < 0) continue;
      throw_error("training diverged at step ", step, ": ", grads ? "the gradient of " : "",
                  p->name, " holds ", t[i], " (element ", i, ")", grads ? "" : " after the update",
                  kept, " (", divergence_advice(config_.train), ")");
    }
  }
}

int64_t Trainer::restore(const std::string& path) {
  const Checkpoint c = read_checkpoint(path);
  // Compared after parsing, so that a checkpoint written before a knob existed (its default) matches.
  SL_CHECK(model_config_to_json(checkpoint_model_config(c)) == model_config_to_json(config_.model),
           path, ": the checkpoint's model config differs from this run's; resume with the same config");
  load_weights(model_, c);
  const auto& params = optimizer_.params();
  for (size_t i = 0; i < params.size(); ++i) {
    for (auto [prefix, state] : {std::pair{"optimizer.m.", &optimizer_.first_moments()[i]},
                                 std::pair{"optimizer.v.", &optimizer_.second_moments()[i]}}) {
      auto it = c.file.tensors.find(prefix + params[i]->name);
      SL_CHECK(it != c.file.tensors.end(), path, ": optimizer state ", prefix, params[i]->name,
               " is missing (not a training checkpoint?)");
      *state = it->second;
    }
  }
  optimizer_.set_steps(c.step);
  if (scaler_) {
    auto it = c.file.tensors.find("loss_scaler.state");
    if (it != c.file.tensors.end()) {  // absent: the run was f32 until now; the scaler starts fresh
      SL_CHECK(it->second.numel() == 4, path, ": loss_scaler.state has ", it->second.numel(),
               " values, expected 4");
      const Tensor<float>& st = it->second;
      scaler_->restore({st[0], int64_t(st[1]), int64_t(st[2]), int64_t(st[3])});
      optimizer_.set_steps(c.step - scaler_->skipped_steps());  // skipped steps did not move Adam
    }
  }
  const Json& saved_train = c.run_config.value("train", Json::object());
  saved_steps_ = saved_train.value("steps", config_.train.steps);
  return c.step;
}

void Trainer::broadcast_state(int64_t& start_step) {
  std::vector<std::pair<float*, int64_t>> tensors;
  const auto& params = optimizer_.params();
  for (size_t i = 0; i < params.size(); ++i) {
    tensors.emplace_back(params[i]->value.data(), params[i]->value.numel());
    tensors.emplace_back(optimizer_.first_moments()[i].data(), params[i]->value.numel());
    tensors.emplace_back(optimizer_.second_moments()[i].data(), params[i]->value.numel());
  }
  broadcast_floats(*comm_, tensors);
  std::string meta;
  if (comm_->rank() == 0) {
    Json m = {{"start_step", start_step}, {"saved_steps", saved_steps_},
              {"optimizer_steps", optimizer_.steps()}};
    if (scaler_) {
      const LossScalerState st = scaler_->state();
      m["scaler"] = {st.scale, st.steps, st.skipped, st.clean_run};
    }
    meta = m.dump();
  }
  comm_->broadcast(meta, 0);
  const Json m = Json::parse(meta);
  start_step = m["start_step"];
  saved_steps_ = m["saved_steps"];
  optimizer_.set_steps(m["optimizer_steps"]);
  if (scaler_ && m.contains("scaler")) {
    const Json& st = m["scaler"];
    scaler_->restore({st[0].get<double>(), st[1].get<int64_t>(), st[2].get<int64_t>(),
                      st[3].get<int64_t>()});
  }
}

std::string Trainer::weights_digest() const {
  std::vector<std::pair<const float*, int64_t>> tensors;
  for (const Parameter<float>* p : optimizer_.params())
    tensors.emplace_back(p->value.data(), p->value.numel());
  return floats_digest(tensors);
}

Comm& Trainer::bind_comm(Comm* comm) {
  if (!comm) {
    if (!solo_) solo_ = single_process_comm();
    comm = solo_.get();
  }
  comm_ = comm;
  return *comm_;
}

int64_t Trainer::open_run(const RunDirectory& dir, const Json& resolved,
                          const TrainerOptions& options) {
  Comm& comm = *comm_;
  const TrainConfig& tc = config_.train;
  SL_CHECK(dir.on_disk() || !options.resume, "resuming needs a run directory (write_run_dir)");
  SL_CHECK(tc.batch_size >= comm.size(), "train.batch_size = ", tc.batch_size, " is smaller than "
           "the number of ranks (", comm.size(), "): each rank needs at least one example of the "
           "global batch");
  if (comm.size() > 1) {  // the same config and the same training data on every rank
    uint64_t data_digest = 1469598103934665603ull;
    for (const Example& e : data_.train) {
      data_digest = fnv1a64(e.src.data(), e.src.size() * sizeof(int32_t), data_digest);
      data_digest = fnv1a64(e.tgt.data(), e.tgt.size() * sizeof(int32_t), data_digest);
    }
    require_same_on_all_ranks(comm, "config or training data",
                              resolved.dump() + "\n" + std::to_string(data_digest));
  }
  // Every check comes before the first write, so a refused command leaves the directory as it was.
  // Rank 0 reads the run directory (the other ranks may not see it: another machine without a
  // shared file system); what it finds or refuses is then every rank's.
  int64_t start_step = 0;
  agree_on_errors(comm, [&] {
    if (comm.rank() != 0) return;
    if (!options.resume) return dir.check_fresh();
    dir.check_resumable();
    start_step = restore(dir.checkpoint_path());
    // Training nothing and relabelling the weights would corrupt the run.
    SL_CHECK(tc.steps >= start_step, "cannot resume: the checkpoint is at step ", start_step,
             ", beyond train.steps = ", tc.steps, " (resuming only trains on; raise train.steps)");
    SL_CHECK(tc.steps != start_step, "train.run_dir = ", tc.run_dir, " is already at step ",
             start_step, " = train.steps: nothing to do (raise train.steps to train on)");
    // Before config.toml/json are rewritten: a broken record is refused with the run untouched.
    dir.trim_metrics(start_step);
  });
  if (comm.size() > 1) broadcast_state(start_step);  // rank 0's weights (fresh or resumed) everywhere
  return start_step;
}

int Trainer::stop_voted(const TrainerOptions& options) {
  // Data parallel: a request on any rank stops every rank after the same step. The vote carries
  // the signal (one slot per standard signal number), so that every rank, and rank 0 which
  // reports for the job, knows which signal stopped it, whichever rank got it.
  std::array<double, kStopSignalSlots> votes{};
  const int requested = options.stop_requested ? int(*options.stop_requested) : 0;
  if (requested != 0) votes[requested > 0 && requested < kStopSignalSlots ? requested : 0] = 1;
  if (comm_->size() > 1) comm_->allreduce_sum(votes.data(), kStopSignalSlots);
  for (int sig = 1; sig < kStopSignalSlots; ++sig)  // the lowest signal number any rank got
    if (votes[sig] > 0) return sig;
  return votes[0] > 0 ? (requested != 0 ? requested : -1) : 0;  // slot 0: one out of range
}

Json Trainer::train_record(int64_t step, const StepResult& r, double lr, int64_t tokens,
                           double elapsed, int64_t skipped_steps) {
  const TrainConfig& tc = config_.train;
  Json rec = {{"split", "train"}, {"step", step}, {"loss", r.loss}, {"nll", r.nll},
              {"lr", lr}, {"grad_norm", r.applied ? Json(r.grad_norm) : Json(nullptr)},
              {"tokens", tokens}, {"tokens_per_s", tokens / std::max(elapsed, 1e-9)},
              {"time_s", elapsed}};
  if (tc.precision.dtype != DType::f32 || scaler_) {
    rec["precision"] = dtype_name(tc.precision.dtype);
    rec["skipped_steps"] = skipped_steps;
    if (scaler_) rec["loss_scale"] = scaler_->scale();
    rec["rounding"] = counters_to_json(counters_);  // since the previous train record
    run_counters_.merge(counters_);
    counters_ = {};
  }
  return rec;
}

EvalResult Trainer::validate(int64_t step, MetricsSink& sink) {
  const TrainConfig& tc = config_.train;
  const EvalResult v = evaluate(model_, data_, data_.valid, tc.batch_size, tc.eval_examples, comm_);
  Json rec = {{"split", "valid"}, {"step", step}, {"loss", v.loss}, {"nll", v.nll},
              {"token_accuracy", v.token_accuracy}};
  if (v.exact_match >= 0) rec["exact_match"] = v.exact_match;
  sink.record(rec);
  return v;
}

void Trainer::save_on_all_ranks(const RunDirectory& dir, int64_t step) {
  if (comm_->size() > 1) require_same_on_all_ranks(*comm_, "weights (the ranks diverged)", weights_digest());
  if (comm_->rank() == 0) save(dir.checkpoint_path(), step);
}

Json Trainer::summary_json(const TrainSummary& summary) {
  const TrainConfig& tc = config_.train;
  Json s = {{"steps", summary.steps}, {"final_train_loss", summary.final_train_loss},
            {"valid_loss", summary.valid.nll}, {"valid_token_accuracy", summary.valid.token_accuracy},
            {"seconds", summary.seconds}, {"tokens_per_second", summary.tokens_per_second},
            {"parameters", summary.parameters}, {"threads", num_threads()}, {"ranks", summary.ranks},
            {"precision", dtype_name(tc.precision.dtype)}, {"skipped_steps", summary.skipped_steps},
            {"matmul_precision", matmul_precision_name(tc.precision.matmul)}};
  if (summary.ranks > 1) {
    // Time in the gradient all-reduce, waiting for the slowest rank included (docs/scaling.md).
    s["allreduce_seconds"] = allreduce_seconds_;
    s["allreduce_calls"] = allreduce_.calls();
  }
  if (tc.precision.matmul == MatmulPrecision::bf16)
    s["bf16_matmul_in_hardware"] = bf16_matmul_uses_hardware();  // the path gemm takes
  if (scaler_) s["loss_scale"] = scaler_->scale();
  if (tc.precision.dtype != DType::f32) {
    run_counters_.merge(counters_);
    counters_ = {};
    s["rounding"] = counters_to_json(run_counters_);  // this process's steps (not those before a resume)
  }
  if (summary.valid.exact_match >= 0) s["valid_exact_match"] = summary.valid.exact_match;
  return s;
}

TrainSummary Trainer::run(const TrainerOptions& options) {
  Comm& comm = bind_comm(options.comm);
  const bool root = comm.rank() == 0, parallel = comm.size() > 1;
  const TrainConfig& tc = config_.train;
  // The run's thread count, restored at the end (it must not leak into the caller's next run).
  std::optional<ScopedNumThreads> threads;
  if (tc.threads > 0) threads.emplace(static_cast<int>(tc.threads));
  const FlushDenormals flush_denormals(tc.flush_denormals);  // after the thread count is set
  const Json resolved = run_config_to_json(config_);
  RunDirectory dir(tc.run_dir, options.write_run_dir, /*writes=*/root);  // rank 0 alone writes
  const int64_t start_step = open_run(dir, resolved, options);
  TrainProgress progress(root ? options.progress : nullptr, tc.steps, start_step);  // and prints
  dir.create();
  progress.header({.parameters = model_.parameter_count(),
                   .examples = static_cast<int64_t>(data_.train.size()), .run_dir = tc.run_dir,
                   .ranks = comm.size(), .resume = options.resume, .start_step = start_step,
                   .steps_changed = options.resume && saved_steps_ != tc.steps &&
                                    tc.schedule.kind == ScheduleKind::warmup_cosine,
                   .saved_steps = saved_steps_});
  dir.start(resolved, options.resume);
  MetricsFanout emit({&dir, options.sink, &progress});

  const bool with_source = config_.model.arch == Architecture::encoder_decoder;
  BatchStream stream(data_.train, tc.batch_size, batch_layout(data_, with_source), tc.seed,
                     tc.length_bucketing);
  for (int64_t s = 0; s < start_step; ++s) stream.next();  // replay the batch order
  TrainSummary summary;
  summary.parameters = model_.parameter_count();
  summary.ranks = comm.size();
  const auto t0 = std::chrono::steady_clock::now();
  auto seconds = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  int64_t tokens = 0, last_saved = start_step;  // last_saved: the checkpoint's step (0: none)
  for (int64_t step = start_step + 1; step <= tc.steps; ++step) {
    const Batch batch = stream.next();  // the global batch: the same on every rank
    const double lr = learning_rate(tc.schedule, step);
    StepResult r;
    {  // the step's GEMMs only: validation and decoding measure the f32 model the checkpoint holds
      const ScopedMatmulPrecision matmul_precision(tc.precision.matmul);
      if (parallel) r = train_step(shard_batch(batch, comm.rank(), comm.size()), batch.target_tokens,
                                   step, lr, options);
      else r = train_step(batch, batch.target_tokens, step, lr, options);
    }
    summary.final_train_loss = r.loss;
    if (!r.applied) summary.skipped_steps += 1;
    tokens += batch.target_tokens;
    const double elapsed = seconds();
    // Read once per step; the last step finishes the run normally (validation, summary).
    const int stop_signal = stop_voted(options);
    const bool stopping = stop_signal != 0 && step < tc.steps;
    if (step % tc.log_every == 0 || step == tc.steps || stopping)
      emit.record(train_record(step, r, lr, tokens, elapsed, summary.skipped_steps));
    const std::string kept = checkpoint_note(dir.on_disk(), last_saved);
    if (!std::isfinite(r.loss)) {
      throw_error("training diverged: loss = ", r.loss, " at step ", step, kept, " (",
                  divergence_advice(tc), ")");
    }
    check_finite(step, r, kept);  // never a checkpoint with inf or NaN in it
    if (tc.eval_every > 0 && step % tc.eval_every == 0 && step != tc.steps)
      summary.valid = validate(step, emit);
    if (dir.on_disk() && ((tc.checkpoint_every > 0 && step % tc.checkpoint_every == 0) || stopping)) {
      save_on_all_ranks(dir, step);
      last_saved = step;
    }
    if (tc.snapshot_every > 0 && step % tc.snapshot_every == 0)
      dir.write_snapshot(model_, resolved, step);
    if (stopping) {  // the checkpoint holds this step; no final validation, no summary.json
      summary.interrupted = true;
      summary.stop_signal = stop_signal;
      summary.steps = step;
      break;
    }
  }
  if (!summary.interrupted) {
    summary.valid = validate(tc.steps, emit);
    if (dir.on_disk()) save_on_all_ranks(dir, tc.steps);
    summary.steps = tc.steps;
  }
  summary.seconds = seconds();
  summary.tokens_per_second = tokens / std::max(summary.seconds, 1e-9);
  if (!summary.interrupted) dir.write_summary(summary_json(summary));
  return summary;
}

}  // namespace scalelab
