// model/transformer: the encoder-decoder of "Attention Is All You Need" and the decoder-only
// variant, as explicit forward and backward passes over nn modules.
//
//   encoder:  e0 = s · E_src[src] + P;  x0 = D(N_e(e0));  x_l = Block_l(x_l-1);  m = N_f(x_L)
//   decoder:  e0 = s · E_tgt[tgt] + P;  y0 = D(N_e(y0));  y_l = Block_l(y_l-1, m); h = N_f(y_L)
//   logits = c · h Wᵀ, then cap · tanh(logits / cap) if output_softcap > 0
// P: sinusoidal or learned absolute positions (RoPE, ALiBi and T5 bias act inside attention);
// N_e: the optional embedding LayerNorm; N_f: the final norm (pre-norm and sandwich only);
// W = E_tgt (tied) or decoder.out.weight. Parameter names are listed in docs/checkpoint.md.
#pragma once
#include <memory>
#include <vector>

#include "scalelab/model/config.hpp"
#include "scalelab/model/decoder_cache.hpp"
#include "scalelab/model/relative_bias.hpp"
#include "scalelab/nn/block.hpp"
#include "scalelab/nn/embedding.hpp"

namespace scalelab {

struct ModelInput {
  int64_t batch = 0, src_len = 0, tgt_len = 0;
  const int32_t* src = nullptr;          // [batch, src_len], padded with <pad> (encoder-decoder)
  const int32_t* src_lengths = nullptr;  // [batch] true source lengths
  const int32_t* tgt = nullptr;          // [batch, tgt_len] decoder input (starts with <bos>)
};

struct ForwardMode {
  bool training = false;  // dropout on
  Rng* rng = nullptr;     // dropout masks; required when training with dropout > 0
  // bf16/f16 training: tensors stored in the format (nn/rounding.hpp); kept for the backward.
  const TensorRounding* rounding = nullptr;
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

  // Incremental decoding with a key/value cache (model/decoder_cache.hpp; transformer_step.cpp).
  // start_decoding encodes in.batch sources (encoder-decoder; decoder-only ignores in) and
  // prepares in.batch rows, row b on source b, for up to `capacity` tokens per row (<= max_len).
  void start_decoding(const ModelInput& in, DecoderCache<T>& cache, int64_t capacity);
  // Feeds one token per row (tokens [cache.rows]) at position cache.position and returns the
  // next-token logits [cache.rows, tgt_vocab] (owned by the model, valid until the next call).
  const Tensor<T>& decode_step(DecoderCache<T>& cache, const int32_t* tokens);

  void zero_grad();
  ParameterRefs<T> parameters();
  Parameter<T>* find_parameter(const std::string& name);
  const ModelConfig& config() const { return config_; }
  int64_t parameter_count();

  // Read-only views for the probes (valid after a forward).
  std::vector<Block<T>>& encoder_blocks() { return encoder_.blocks; }
  std::vector<Block<T>>& decoder_blocks() { return decoder_.blocks; }
  Embedding<T>& embedding(bool encoder) { return stack(encoder).embed; }
  const Tensor<T>& embedding_sum(bool encoder) { return stack(encoder).e0; }  // s·E[ids] + P
  const Tensor<T>& stack_input(bool encoder) { return *stack(encoder).input; }  // layer 0's input
  const Tensor<T>& logits() const { return logits_; }
  const ModelInput& last_input() const { return input_; }

 private:
  struct Stack {
    Embedding<T> embed;
    Parameter<T> positions;      // learned absolute positions [max_len, d]
    Parameter<T> relative_bias;  // T5 buckets [buckets, heads]
    RelativeBiasShape bias_shape;
    Norm<T> embed_norm;          // optional (BERT)
    Dropout<T> dropout;
    std::vector<Block<T>> blocks;
    Norm<T> final_norm;          // pre-norm and sandwich only
    Tensor<T> e0, x0, out, dx, de0, bias, dbias;
    // After run_stack, the rows [batch·len, d] layer 0 read: x0, or e0 itself where no embedding
    // norm or active dropout stands between; and the stack's output: out (the final norm's), or
    // the last block's own output where there is no final norm (post-norm). Read in place.
    const Tensor<T>* input = nullptr;
    const Tensor<T>* output = nullptr;
    int64_t batch = 0, len = 0;
  };
  Stack& stack(bool encoder) { return encoder ? encoder_ : decoder_; }
  void build_stack(Stack& s, const std::string& name, int64_t vocab, int64_t layers, bool cross,
                   bool bidirectional);
  ParameterRefs<T> stack_parameters(Stack& s);
  const Tensor<T>& run_stack(Stack& s, const int32_t* ids, BlockCall call, const ForwardMode& mode);
  void backward_stack(Stack& s, const T* dout, T* dmemory);
  const T* output_weight();
  bool has_final_norm() const { return config_.norm != NormPlacement::post; }

  ModelConfig config_;
  bool encoder_decoder_ = true;
  Stack encoder_, decoder_;
  Parameter<T> out_weight_;  // untied output projection [tgt_vocab, d]
  const Tensor<T>& output_logits(const T* h, int64_t rows, const TensorRounding* rounding);

  Tensor<T> logits_, dlogits_, dh_, dmemory_, step_bias_;
  ModelInput input_;
  const TensorRounding* rounding_ = nullptr;  // of the last forward, for its backward
};

}  // namespace scalelab
