// probes/model_probe: reads a Transformer's saved forward state after the fact and accumulates, per
// stack, layer, sublayer and head, everything the forward probes report (docs/probes.md):
//
//   attn_qk          entries of q and k as they enter the attention kernel
//   attn_logits_raw  q·k before the scale;   attn_logits  after scale, soft-cap, bias, ALiBi
//   attn_softmax     normalised entropy, max p, saturated share, ||J||_F of the softmax rows
//   attn_kernel      the attention kernel's own online statistics (when armed before the forward)
//   residual         the residual stream after each sublayer;  sublayer  f(.) of each sublayer
//   embed            Var(token part) / Var(position part) of s·E[ids] + P at the stack's input
//   activation       max |value| per op and the headroom to the f16 maximum
//
// It never writes to the model (except the kernel-statistics sink pointers, which only make the
// kernel fill a separate struct), so the logits and gradients are bit-identical with and without
// it. Padded positions (source beyond src_lengths, target <pad>) are left out of every figure except
// attn_kernel, which sees what the kernel sees.
#pragma once
#include <map>
#include <memory>
#include <tuple>
#include <vector>

#include "scalelab/model/transformer.hpp"
#include "scalelab/probes/attention_probe.hpp"
#include "scalelab/probes/record.hpp"

namespace scalelab::probes {

struct ModelProbeOptions {
  AttentionProbeOptions attention;
  bool per_head = true;       // attention records per head as well as all heads (head = -1)
  bool attention_probes = true;
  bool stream_probes = true;  // residual, sublayer, embed
  bool activation_probes = true;
};

template <class T>
class ModelProbe {
 public:
  ModelProbe(Transformer<T>& model, ModelProbeOptions options = {});
  ~ModelProbe();
  ModelProbe(const ModelProbe&) = delete;
  ModelProbe& operator=(const ModelProbe&) = delete;

  // Makes every attention module's kernel fill its statistics during the following forwards
  // (zero cost when disarmed, which the destructor also does).
  void arm_kernel_stats();
  void disarm_kernel_stats();

  // Accumulates the state of the model's last forward (eval mode; call before the next forward).
  void observe_forward();
  int64_t forwards() const { return forwards_; }

  // Everything accumulated so far, as records labelled with this seed and step.
  std::vector<ProbeRecord> records(int64_t seed, int64_t step) const;

 private:
  // (stack, layer, site): layer -1 is stack-level, site names the sublayer or op.
  using Key = std::tuple<std::string, int64_t, std::string>;
  void observe_stack(bool encoder);
  void observe_attention(const Key& key, MultiHeadAttention<T>& attn, const uint8_t* rows);
  void activation(const Key& key, const T* x, int64_t rows, int64_t width, const uint8_t* mask);
  std::vector<uint8_t> row_mask(bool encoder) const;

  Transformer<T>& model_;
  ModelProbeOptions opt_;
  int64_t forwards_ = 0;
  std::map<Key, std::vector<HeadAttentionStats>> attention_;
  std::map<Key, std::unique_ptr<AttentionProbeStats>> kernel_;  // stable addresses for the sinks
  std::map<Key, RunningMoments> residual_, sublayer_;
  std::map<Key, RangeMoments> activation_;
  struct EmbedStats {
    RunningMoments token, position, sum, input, token_sq_norm, position_sq_norm;
  };
  std::map<std::string, EmbedStats> embed_;
};

}  // namespace scalelab::probes
