// model/transformer: the encoder-decoder of "Attention Is All You Need" and the decoder-only
// variant, as explicit forward and backward passes over nn modules.
//
//   encoder:  x0 = D(s · E_src[src] + PE);  x_l = Block_l(x_l-1);  m = LN_f(x_L) (pre-LN only)
//   decoder:  y0 = D(s · E_tgt[tgt] + PE);  y_l = Block_l(y_l-1, m); h = LN_f(y_L) (pre-LN only)
//   logits = c · h Wᵀ  with W = E_tgt (tied, c = output_scale) or the untied decoder.out.weight
// Parameter names are listed in docs/checkpoint.md.
#pragma once
#include <memory>
#include <vector>

#include "scalelab/model/config.hpp"
#include "scalelab/nn/block.hpp"
#include "scalelab/nn/embedding.hpp"

namespace scalelab {

struct ModelInput {
  int64_t batch = 0, src_len = 0, tgt_len = 0;
  const int32_t* src = nullptr;          // [batch, src_len], padded with kPadId (encoder-decoder)
  const int32_t* src_lengths = nullptr;  // [batch] true source lengths
  const int32_t* tgt = nullptr;          // [batch, tgt_len] decoder input (starts with <bos>)
};

struct ForwardMode {
  bool training = false;  // dropout on
  Rng* rng = nullptr;     // dropout masks; required when training with dropout > 0
};

template <class T>
class Transformer {
 public:
  explicit Transformer(const ModelConfig& config);

  // Draws every parameter from the config's initialisation rules with config.seed.
  void initialize();

  // Returns the logits [batch*tgt_len, tgt_vocab] (owned by the model, valid until next call).
  const Tensor<T>& forward(const ModelInput& input, const ForwardMode& mode);
  // Accumulates every parameter's gradient from dlogits [batch*tgt_len, tgt_vocab].
  void backward(const T* dlogits);

  // The two halves, for decoding: encode once, then decode growing prefixes.
  void encode(const ModelInput& input, const ForwardMode& mode);
  const Tensor<T>& decode(const ModelInput& input, const ForwardMode& mode);

  void zero_grad();
  ParameterRefs<T> parameters();
  Parameter<T>* find_parameter(const std::string& name);
  const ModelConfig& config() const { return config_; }
  int64_t parameter_count();

  // For probes: the blocks and the layer-0 input of each stack.
  std::vector<Block<T>>& encoder_blocks() { return encoder_.blocks; }
  std::vector<Block<T>>& decoder_blocks() { return decoder_.blocks; }

 private:
  struct Stack {
    Embedding<T> embed;
    Dropout<T> dropout;
    std::vector<Block<T>> blocks;
    LayerNorm<T> final_norm;  // pre-LN only
    Tensor<T> x0, out, dx;
    int64_t batch = 0, len = 0;
  };
  void build_stack(Stack& s, const std::string& name, int64_t vocab, int64_t layers, bool cross);
  const Tensor<T>& run_stack(Stack& s, const int32_t* ids, const BlockCall& call,
                             const ForwardMode& mode);
  void backward_stack(Stack& s, const T* dout, T* dmemory);
  const T* output_weight();

  ModelConfig config_;
  bool encoder_decoder_ = true;
  Stack encoder_, decoder_;
  Parameter<T> out_weight_;  // untied output projection [tgt_vocab, d]
  Tensor<T> logits_, dh_, dmemory_;
  ModelInput input_;
};

}  // namespace scalelab
