#include "scalelab/train/decode.hpp"

#include <algorithm>

#include "scalelab/core/error.hpp"

namespace scalelab {

bool emittable_token(int64_t id) { return id != kPadId && id != kBosId && id != kUnkId; }

int32_t argmax_emittable(const float* z, int64_t V) {
  int32_t best = -1;
  for (int64_t v = 0; v < V; ++v)
    if (emittable_token(v) && (best < 0 || z[v] > z[best])) best = static_cast<int32_t>(v);
  SL_CHECK(best >= 0, "decoding: the target vocabulary (", V, " ids) holds no emittable token");
  return best;
}

std::vector<std::vector<int32_t>> greedy_decode(Transformer<float>& model, const Batch& batch,
                                                int64_t max_len, bool use_cache) {
  const int64_t B = batch.size, V = model.config().tgt_vocab;
  max_len = std::min<int64_t>(max_len, model.config().max_len - 1);
  ModelInput in{.batch = B, .src_len = batch.src_len, .tgt_len = 1, .src = batch.src.data(),
                .src_lengths = batch.src_lengths.data()};
  const ForwardMode eval{};
  DecoderCache<float> cache;
  if (use_cache) model.start_decoding(in, cache, std::max<int64_t>(1, max_len));
  else model.encode(in, eval);
  std::vector<std::vector<int32_t>> out(B);
  std::vector<bool> done(B, false);
  std::vector<int32_t> prefix(B, kBosId);  // [B, t] (uncached)
  std::vector<int32_t> last(B, kBosId);    // [B] the newest token of each row (cached)
  for (int64_t t = 1; t <= max_len; ++t) {
    const Tensor<float>* logits = nullptr;
    if (use_cache) {
      logits = &model.decode_step(cache, last.data());  // [B, V]: position t - 1
    } else {
      in.tgt_len = t;
      in.tgt = prefix.data();
      logits = &model.decode(in, eval);                 // [B*t, V]
    }
    std::vector<int32_t> next(use_cache ? 0 : B * (t + 1));
    bool all_done = true;
    for (int64_t b = 0; b < B; ++b) {
      const float* z = logits->data() + (use_cache ? b : b * t + t - 1) * V;
      const int32_t token = argmax_emittable(z, V);
      if (use_cache) {
        last[b] = token;
      } else {
        std::copy(prefix.begin() + b * t, prefix.begin() + (b + 1) * t, next.begin() + b * (t + 1));
        next[b * (t + 1) + t] = token;
      }
      if (!done[b]) {
        if (token == kEosId) done[b] = true;
        else out[b].push_back(token);
      }
      all_done = all_done && done[b];
    }
    if (!use_cache) prefix.swap(next);
    if (all_done) break;
  }
  return out;
}

double exact_match(Transformer<float>& model, const std::vector<Example>& examples,
                   int64_t batch_size, int64_t max_extra_len) {
  if (examples.empty()) return 0.0;
  int64_t right = 0;
  size_t offset = 0;
  for (const Batch& b : batches_in_order(examples, batch_size, BatchLayout::seq2seq)) {
    const auto decoded = greedy_decode(model, b, b.tgt_len + max_extra_len);
    for (int64_t i = 0; i < b.size; ++i) right += decoded[i] == examples[offset + i].tgt;
    offset += b.size;
  }
  return double(right) / double(examples.size());
}

}  // namespace scalelab
