// The attention logit transform (kernels/attention_logit.hpp): the scalar definition against the
// formula of attention.hpp bit for bit, and against its float SIMD twin on every compiled target,
// on random raw scores with every knob (head scales, soft-cap, bias, ALiBi) and every mask
// (causal, padding).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "scalelab/kernels/attention_flash_simd.hpp"
#include "scalelab/kernels/attention_logit.hpp"
#include "scalelab/kernels/simd_dispatch.hpp"
#include "support/numerics.hpp"

namespace scalelab {
namespace {

using testing::normals;

struct Knobs {
  const char* name;
  bool head_scales, softcap, bias, alibi, causal, padding;
};

const Knobs kCases[] = {
    {"scale", false, false, false, false, false, false},
    {"head_scales", true, false, false, false, false, false},
    {"softcap", false, true, false, false, false, false},
    {"bias", false, false, true, false, false, false},
    {"alibi_causal", false, false, false, true, true, false},
    {"padding", false, false, false, false, false, true},
    {"softcap_causal_padding", true, true, false, false, true, true},
    {"everything", true, true, true, true, true, true},
};

// Options for `heads` heads over q_len × k_len with the knobs of `c`; the arrays live in `store`.
struct OptionsStore {
  std::vector<float> head_scales, bias, slopes;
  std::vector<int32_t> key_lengths;
};
AttentionOptions<float> options_for(const Knobs& c, const AttentionShape& s, OptionsStore& store) {
  AttentionOptions<float> o;
  o.scale = 0.37;
  o.causal = c.causal;
  if (c.head_scales) {
    store.head_scales = normals<float>(s.heads, 11, 0.2, 0.5);
    o.head_scales = store.head_scales.data();
  }
  if (c.softcap) o.softcap = 2.5;  // well inside the raw range below: the cap bends the logits
  if (c.bias) {
    store.bias = normals<float>(s.heads * s.q_len * s.k_len, 12, 1.5);
    o.bias = store.bias.data();
  }
  if (c.alibi) {
    store.slopes = {0.5f, 0.25f, 0.0f};  // a zero slope: the head without a penalty
    o.alibi_slopes = store.slopes.data();
  }
  if (c.padding) {
    store.key_lengths.resize(s.batch);
    for (int64_t b = 0; b < s.batch; ++b) store.key_lengths[b] = static_cast<int32_t>(s.k_len - 7 * b);
    o.key_lengths = store.key_lengths.data();
  }
  return o;
}

// The logit of attention.hpp written out from the options, independently of AttentionLogit, in
// float and in the order of operations every kernel used before the definition was shared: the
// shared one must give the same bits.
float formula(const AttentionShape& s, const AttentionOptions<float>& o, int64_t h, int64_t i,
              int64_t j, float raw) {
  const float scale = o.head_scales ? o.head_scales[h] : static_cast<float>(o.scale);
  float x = scale * raw;
  if (o.softcap > 0) x = static_cast<float>(o.softcap) * std::tanh(x / static_cast<float>(o.softcap));
  if (o.bias) x += o.bias[(h * s.q_len + i) * s.k_len + j];
  if (o.alibi_slopes) x -= o.alibi_slopes[h] * static_cast<float>(std::llabs(i + s.k_len - s.q_len - j));
  return x;
}

TEST(AttentionLogit, ScalarIsTheFormulaOfAttentionHppBitForBit) {
  const AttentionShape s{.batch = 2, .heads = 3, .q_len = 5, .k_len = 29, .head_dim = 8};
  for (const Knobs& c : kCases) {
    SCOPED_TRACE(c.name);
    OptionsStore store;
    const AttentionOptions<float> o = options_for(c, s, store);
    const std::vector<float> raw = normals<float>(s.q_len * s.k_len, 13, 4.0);
    for (int64_t h = 0; h < s.heads; ++h) {
      const AttentionLogit<float> logit(s, o, h);
      for (int64_t i = 0; i < s.q_len; ++i)
        for (int64_t j = 0; j < s.k_len; ++j) {
          const float r = raw[i * s.k_len + j];
          EXPECT_EQ(logit(i, j, r), formula(s, o, h, i, j, r)) << "h " << h << " i " << i << " j " << j;
        }
    }
  }
}

TEST(AttentionLogit, VisibleKeysAreTheUnmaskedPrefix) {
  const AttentionShape s{.batch = 2, .heads = 1, .q_len = 4, .k_len = 10, .head_dim = 8};
  const int32_t lengths[] = {10, 6};
  AttentionOptions<float> o;
  o.causal = true;
  o.key_lengths = lengths;
  // causal: query i sees keys j <= i + k_len - q_len = i + 6; padding: j < key_lengths[b].
  EXPECT_EQ(attention_visible_keys(s, o, 0, 0), 7);
  EXPECT_EQ(attention_visible_keys(s, o, 0, 3), 10);
  EXPECT_EQ(attention_visible_keys(s, o, 1, 0), 6);
  o.causal = false;
  EXPECT_EQ(attention_visible_keys(s, o, 0, 0), 10);
  EXPECT_EQ(attention_visible_keys(s, o, 1, 3), 6);
  o.key_lengths = nullptr;
  o.causal = true;
  const AttentionShape one_query{.batch = 1, .heads = 1, .q_len = 1, .k_len = 10, .head_dim = 8};
  EXPECT_EQ(attention_visible_keys(one_query, o, 0, 0), 10);  // decode: nothing after the query
}

// Every compiled SIMD target: the SIMD row equals the scalar logit on the visible keys (to the
// rounding of a fused multiply-add and of Highway's tanh) and is -inf on the masked ones, for rows
// starting at key 0 and inside the key range (a tile of the flash kernel).
TEST(AttentionLogit, SimdTwinMatchesScalarOnEveryTarget) {
  const AttentionShape s{.batch = 3, .heads = 3, .q_len = 7, .k_len = 37, .head_dim = 8};
  const std::vector<std::string> targets = simd_targets();
  ASSERT_FALSE(targets.empty());
  for (const std::string& target : targets) {
    force_simd_target(target);
    SCOPED_TRACE(target);
    for (const Knobs& c : kCases) {
      SCOPED_TRACE(c.name);
      OptionsStore store;
      const AttentionOptions<float> o = options_for(c, s, store);
      int64_t compared = 0, masked = 0;
      for (int64_t b = 0; b < s.batch; ++b)
        for (int64_t h = 0; h < s.heads; ++h) {
          const AttentionLogit<float> logit(s, o, h);
          for (int64_t i = 0; i < s.q_len; ++i)
            for (const int64_t j0 : {int64_t(0), int64_t(16)}) {
              const int64_t n = s.k_len - j0;
              const std::vector<float> raw = normals<float>(n, 100 + (b * s.heads + h) * 64 + i, 4.0);
              const int64_t visible = attention_visible_keys(s, o, b, i);
              const int64_t limit = std::clamp<int64_t>(visible - j0, 0, n);
              std::vector<float> row = raw;
              detail::attention_logit_row_simd(logit, i, j0, n, limit, row.data());
              for (int64_t c2 = 0; c2 < n; ++c2) {
                if (c2 >= limit) {
                  EXPECT_EQ(row[c2], -std::numeric_limits<float>::infinity()) << "masked key " << j0 + c2;
                  ++masked;
                  continue;
                }
                const float want = logit(i, j0 + c2, raw[c2]);
                EXPECT_NEAR(row[c2], want, 2e-6f * (1.0f + std::abs(want)))
                    << "b " << b << " h " << h << " i " << i << " j " << j0 + c2;
                ++compared;
              }
            }
        }
      EXPECT_GT(compared, 0);
      if (c.causal || c.padding) EXPECT_GT(masked, 0);
    }
  }
  force_simd_target("");
}

}  // namespace
}  // namespace scalelab
