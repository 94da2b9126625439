// nn/block: one Transformer layer, the residual wiring of its sublayers.
//
// An encoder layer has sublayers [self_attn, ffn]; a decoder layer [self_attn, cross_attn, ffn]
// (decoder-only models use the encoder-style pair with a causal mask). Each sublayer f, with its
// norm N_i (LayerNorm or RMSNorm) and dropout D_i, maps the residual stream x to
//   post:  x' = N_i(x + D_i(f(x)))     pre:  x' = x + D_i(f(N_i(x)))
//   sandwich (Gemma 2):  x' = x + D_i(N'_i(f(N_i(x))))
// Names: <name>.self_attn, <name>.cross_attn, <name>.ffn, <name>.norm1..norm3 in that order, and
// <name>.post_norm1..3 for the sandwich's second norms.
//
// Incremental decoding: forward_step runs the same wiring on one new token per row (call.len = 1),
// with the attentions reading and extending a BlockCache instead of seeing the whole prefix.
#pragma once
#include <vector>

#include "scalelab/nn/attention.hpp"
#include "scalelab/nn/dropout.hpp"
#include "scalelab/nn/feed_forward.hpp"
#include "scalelab/nn/norm.hpp"
#include "scalelab/nn/rounding.hpp"

namespace scalelab {

struct BlockCall {
  int64_t batch = 0, len = 0;            // the stream is [batch*len, d_model]
  bool causal = false;                   // self-attention mask
  const int32_t* lengths = nullptr;      // [batch] key padding of the self-attention, or null
  const void* memory = nullptr;          // cross-attention keys/values: const T* [batch*memory_len, d]
  int64_t memory_len = 0;
  const int32_t* memory_lengths = nullptr;
  const void* self_bias = nullptr;       // const T* [heads, len, len] additive (T5), or null
  void* self_dbias = nullptr;            // T* its gradient (+=), or null
  bool training = false;
  Rng* rng = nullptr;                    // dropout masks (needed when training)
  const TensorRounding* rounding = nullptr;  // bf16/f16 training emulation (nn/rounding.hpp), or null
  // forward_step only: the memory sequence each row reads from its BlockCache::cross, or null.
  const int64_t* memory_sequence_of_row = nullptr;
};

// What a decoder layer keeps between cached steps.
template <class T>
struct BlockCache {
  KvCache<T> self;   // the self-attention's keys and values of the positions so far
  KvCache<T> cross;  // the cross-attention's keys and values of the encoder memory
};

template <class T>
class Block {
 public:
  Block() = default;
  Block(const std::string& name, const LayerOptions& options, bool cross_attention);

  // x: [batch*len, d] (kept by pointer until backward). Returns the output (owned by the block).
  const Tensor<T>& forward(const BlockCall& call, const T* x);
  // dy: gradient of the output. Returns the gradient of x; accumulates into dmemory (+=), which
  // may be null for a block without cross-attention.
  const Tensor<T>& backward(const T* dy, T* dmemory);

  // Cached decoding (forward only, no dropout or rounding): x [batch, d] holds one new token per
  // row, call.len must be 1; call.self_bias is [heads, positions so far + 1]; call.memory_lengths
  // are per row. Returns the output rows (owned by the block); a backward is not possible after it.
  const Tensor<T>& forward_step(const BlockCall& call, const T* x, BlockCache<T>& cache);
  // Fills cache.cross from the encoder memory [sequences*len, d] (blocks with cross-attention).
  void cache_memory(const T* memory, int64_t sequences, int64_t len, BlockCache<T>& cache);

  ParameterRefs<T> parameters();
  MultiHeadAttention<T>& self_attention() { return self_attn_; }
  MultiHeadAttention<T>* cross_attention() { return has_cross_ ? &cross_attn_ : nullptr; }

  // Read-only views for the probes (valid after a forward).
  int64_t stage_count() const { return static_cast<int64_t>(stages_.size()); }
  const char* stage_name(int i) const;
  const Tensor<T>& stage_output(int i) const { return stages_[i].out; }     // the residual stream
  const Tensor<T>& sublayer_output(int i) const { return stages_[i].f_out; } // D(f(.)) (sandwich: after N')

 private:
  enum class Kind { self_attn, cross_attn, ffn };
  struct Stage {
    Kind kind = Kind::ffn;
    Norm<T> norm;
    Norm<T> post_norm;       // sandwich only
    Dropout<T> dropout;
    const T* in = nullptr;   // stage input x
    Tensor<T> f_in;          // pre, sandwich: N(x)
    Tensor<T> f_raw;         // sandwich: f(N(x)) before N'
    Tensor<T> f_out;         // f(.) (sandwich: N'(f(.))) then dropout, in place
    Tensor<T> sum;           // post: x + D(f(x)) before the norm
    Tensor<T> out;           // x'
  };
  void run(Stage& s, const T* f_input, T* f_output);
  void run_backward(Stage& s, const T* df, T* dinput);

  LayerOptions opt_;
  bool has_cross_ = false;
  MultiHeadAttention<T> self_attn_, cross_attn_;
  FeedForward<T> ffn_;
  std::vector<Stage> stages_;
  BlockCall call_;
  int64_t rows_ = 0;
  Tensor<T> grad_a_, grad_b_, df_, dfin_, draw_;
  T* dmemory_ = nullptr;
  BlockCache<T>* step_cache_ = nullptr;  // set during forward_step
};

}  // namespace scalelab
