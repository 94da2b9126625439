// scalelab logits / gradients: run a checkpoint on given token ids and write what it computes,
// for inspection and for comparison with other frameworks (tests/oracle does this with PyTorch).
#include <iostream>

#include "commands.hpp"
#include "output_file.hpp"
#include "scalelab/core/safetensors.hpp"
#include "scalelab/data/example.hpp"
#include "scalelab/model/checkpoint.hpp"
#include "scalelab/train/loss.hpp"

namespace scalelab::cli {
namespace {

struct InspectArgs {
  std::string checkpoint, source, input, target, out;
  double label_smoothing = 0.0;
  bool force = false;
};

struct LoadedInput {
  Shape src_shape, tgt_shape;
  std::vector<int32_t> src, src_lengths, tgt;
};

// Source lengths: everything up to the last non-pad token.
std::vector<int32_t> lengths_from_padding(const std::vector<int32_t>& ids, const Shape& shape) {
  std::vector<int32_t> lengths(shape[0], 0);
  for (int64_t b = 0; b < shape[0]; ++b)
    for (int64_t t = 0; t < shape[1]; ++t)
      if (ids[b * shape[1] + t] != kPadId) lengths[b] = static_cast<int32_t>(t + 1);
  return lengths;
}

LoadedInput load_input(const InspectArgs& a, const ModelConfig& config) {
  LoadedInput in;
  in.tgt = read_npy_int(a.input, in.tgt_shape);
  SL_CHECK(in.tgt_shape.size() == 2, "--input ", a.input, ": expected a 2-D array [batch, length], got shape ",
           shape_str(in.tgt_shape));
  if (config.arch == Architecture::encoder_decoder) {
    SL_CHECK(!a.source.empty(), "--source is required for an encoder-decoder checkpoint");
    in.src = read_npy_int(a.source, in.src_shape);
    SL_CHECK(in.src_shape.size() == 2 && in.src_shape[0] == in.tgt_shape[0], "--source ", a.source,
             ": expected shape [", in.tgt_shape[0], ", length], got ", shape_str(in.src_shape));
    in.src_lengths = lengths_from_padding(in.src, in.src_shape);
  }
  return in;
}

ModelInput as_model_input(const LoadedInput& in) {
  return {.batch = in.tgt_shape[0], .src_len = in.src_shape.empty() ? 0 : in.src_shape[1],
          .tgt_len = in.tgt_shape[1], .src = in.src.empty() ? nullptr : in.src.data(),
          .src_lengths = in.src_lengths.empty() ? nullptr : in.src_lengths.data(),
          .tgt = in.tgt.data()};
}

void add_common(CLI::App* cmd, InspectArgs& a) {
  cmd->add_option("--checkpoint", a.checkpoint, "a scalelab checkpoint (.safetensors)")->required();
  cmd->add_option("--source", a.source, "encoder token ids, .npy int32/int64 [batch, src_len], 0 = <pad>");
  cmd->add_option("--input", a.input, "decoder input ids, .npy int32/int64 [batch, tgt_len] (starting with <bos> = 1)")
      ->required();
  cmd->add_flag("--force", a.force, "overwrite --out if it exists");
}

}  // namespace

void add_logits(CLI::App& app) {
  auto a = std::make_shared<InspectArgs>();
  CLI::App* cmd = app.add_subcommand("logits", "Write a checkpoint's output logits for given ids to a .npy file");
  add_common(cmd, *a);
  cmd->add_option("--out,-o", a->out, "where to write the logits, float32 .npy [batch, tgt_len, vocab]")->required();
  cmd->callback([a] {
    check_output_file("--out", a->out, a->force);
    const Checkpoint c = read_checkpoint(a->checkpoint);
    Transformer<float> model(checkpoint_model_config(c));
    load_weights(model, c);
    const LoadedInput in = load_input(*a, model.config());
    const Tensor<float>& logits = model.forward(as_model_input(in), ForwardMode{});
    write_npy(a->out, {in.tgt_shape[0], in.tgt_shape[1], model.config().tgt_vocab}, logits.data());
    std::cout << "wrote " << a->out << "\n";
  });
}

void add_gradients(CLI::App& app) {
  auto a = std::make_shared<InspectArgs>();
  CLI::App* cmd = app.add_subcommand(
      "gradients",
      "Write logits, the loss and every parameter's gradient for given ids and targets (no dropout)");
  add_common(cmd, *a);
  cmd->add_option("--target", a->target, "target ids, .npy [batch, tgt_len], 0 = <pad> (ignored)")->required();
  cmd->add_option("--label-smoothing", a->label_smoothing, "label smoothing of the loss")->check(finite_range(0.0, 0.999));
  cmd->add_option("--out,-o", a->out, "where to write: safetensors with logits, loss and grad.<name>")->required();
  cmd->callback([a] {
    check_output_file("--out", a->out, a->force);
    const Checkpoint c = read_checkpoint(a->checkpoint);
    Transformer<float> model(checkpoint_model_config(c));
    load_weights(model, c);
    const LoadedInput in = load_input(*a, model.config());
    Shape target_shape;
    const std::vector<int32_t> target = read_npy_int(a->target, target_shape);
    SL_CHECK(target_shape == in.tgt_shape, "--target ", a->target, ": shape ", shape_str(target_shape),
             " differs from --input's ", shape_str(in.tgt_shape));
    model.zero_grad();
    const Tensor<float>& logits = model.forward(as_model_input(in), ForwardMode{});
    Tensor<float> dlogits(logits.shape());
    const int64_t V = model.config().tgt_vocab;
    const LossResult loss = cross_entropy<float>(logits.data(), target.data(), logits.dim(0), V,
                                                 a->label_smoothing, kPadId, dlogits.data());
    const float loss_value = static_cast<float>(loss.loss);
    std::vector<TensorRef> out{{"logits", {in.tgt_shape[0], in.tgt_shape[1], V}, logits.data()},
                               {"loss", {1}, &loss_value}};
    model.backward(dlogits.data());
    for (Parameter<float>* p : model.parameters())
      out.push_back({"grad." + p->name, p->grad.shape(), p->grad.data()});
    write_safetensors(a->out, out, {{"loss", std::to_string(loss.loss)}});
    std::cout << "wrote " << a->out << " (loss " << loss.loss << ")\n";
  });
}

}  // namespace scalelab::cli
