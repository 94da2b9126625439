#include "scalelab/train/sampling.hpp"

#include <algorithm>
#include <cmath>

#include "scalelab/core/error.hpp"
#include "scalelab/data/example.hpp"

namespace scalelab {

int32_t draw_token(const float* z, int64_t V, int32_t first, double temperature, Rng& rng) {
  SL_CHECK(first < V, "draw_token: no token to draw from (first = ", first, ", vocab = ", V, ")");
  if (temperature == 0.0) return static_cast<int32_t>(std::max_element(z + first, z + V) - z);
  const double m = *std::max_element(z + first, z + V);
  std::vector<double> p(V - first);
  double sum = 0;
  for (int64_t v = first; v < V; ++v) sum += p[v - first] = std::exp((double(z[v]) - m) / temperature);
  double u = rng.uniform() * sum;
  for (int64_t v = first; v < V; ++v) {
    u -= p[v - first];
    if (u < 0) return static_cast<int32_t>(v);
  }
  return static_cast<int32_t>(V - 1);  // rounding: the last token
}

std::vector<int32_t> sample_tokens(Transformer<float>& model, const std::vector<int32_t>& prompt,
                                   const SampleOptions& options) {
  SL_CHECK(model.config().arch == Architecture::decoder_only,
           "sampling needs a decoder-only language model (this checkpoint is encoder-decoder)");
  SL_CHECK(!prompt.empty(), "the prompt must hold at least one token");
  SL_CHECK(options.temperature >= 0 && std::isfinite(options.temperature), "temperature = ",
           options.temperature, ": must be >= 0 (0: greedy)");
  SL_CHECK(options.length >= 0, "length = ", options.length, ": must be >= 0");
  const int64_t V = model.config().tgt_vocab;
  const int64_t window = options.context > 0 ? std::min(options.context, model.config().max_len)
                                             : model.config().max_len;
  Rng rng(options.seed);
  std::vector<int32_t> text = prompt, out;
  // Cached while the text fits the window (every token keeps its position); fed: tokens in it.
  bool cached = options.use_cache && static_cast<int64_t>(text.size()) <= window;
  DecoderCache<float> cache;
  size_t fed = 0;
  if (cached) model.start_decoding(ModelInput{.batch = 1}, cache, window);
  for (int64_t i = 0; i < options.length; ++i) {
    if (cached && static_cast<int64_t>(text.size()) > window) cached = false;  // sliding from here
    const float* z = nullptr;
    if (cached) {
      const Tensor<float>* logits = nullptr;
      for (; fed < text.size(); ++fed) logits = &model.decode_step(cache, &text[fed]);  // [1, V]
      z = logits->data();
    } else {
      const int64_t len = std::min<int64_t>(window, text.size());
      const int32_t* start = text.data() + text.size() - len;
      ModelInput in{.batch = 1, .tgt_len = len, .tgt = start};
      z = model.forward(in, ForwardMode{}).data() + (len - 1) * V;
    }
    const int32_t next = draw_token(z, V, kNumSpecialTokens, options.temperature, rng);
    text.push_back(next);
    out.push_back(next);
  }
  return out;
}

}  // namespace scalelab
