// Independent checks of the naive attention kernel (kernels/attention.hpp, attention_naive.cpp):
// forward against a test-local oracle written from the header's math (double and float), known
// answers, and finite-difference checks in double of every gradient (q, k, v, head_scales, bias)
// for every option: causal, key padding, soft-cap, ALiBi, additive bias, per-head scales,
// cross-attention (q_len != k_len) and strided / packed token layouts.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <iostream>
#include <ostream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "scalelab/core/rng.hpp"
#include "scalelab/kernels/attention.hpp"
#include "support/finite_difference.hpp"

namespace scalelab {
namespace {

constexpr double kSentinel = 12345.25;  // in padding between tokens: must be neither read nor written

struct Case {
  std::string name;
  int64_t batch = 2, heads = 2, q_len = 4, k_len = 4, head_dim = 3;
  int64_t q_pad = 0, k_pad = 0, v_pad = 0, o_pad = 0;  // extra elements per token (strided layout)
  bool packed_qkv = false;  // q, k, v interleaved in one [batch, len, 3*heads*head_dim] buffer
  double scale = 0.5;
  bool head_scales = false, causal = false, bias = false, alibi = false;
  std::vector<int32_t> key_lengths;  // empty: no padding mask
  double softcap = 0.0;
  double fd_tol = 1e-6;     // worst relative error of the double backward vs central differences
  double float_tol = 2e-6;  // float forward vs oracle, normalised by max |out|
  friend std::ostream& operator<<(std::ostream& o, const Case& c) { return o << c.name; }
};

// Buffers for one problem in precision T, laid out as the kernel sees them.
template <class T>
struct Problem {
  AttentionShape shape;
  std::vector<T> qkv;  // only when packed
  std::vector<T> q, k, v, out, head_scales, bias, alibi;
  std::vector<int32_t> key_lengths;
  T *qp = nullptr, *kp = nullptr, *vp = nullptr;
  int64_t qs = 0, ks = 0, vs = 0, os = 0;  // resolved strides

  AttentionOptions<T> options(const Case& c) const {
    AttentionOptions<T> opt;
    opt.scale = c.scale;
    opt.head_scales = c.head_scales ? head_scales.data() : nullptr;
    opt.causal = c.causal;
    opt.key_lengths = key_lengths.empty() ? nullptr : key_lengths.data();
    opt.softcap = c.softcap;
    opt.bias = c.bias ? bias.data() : nullptr;
    opt.alibi_slopes = c.alibi ? alibi.data() : nullptr;
    return opt;
  }
};

// Whether element e of a token row of width `stride` is a real (head, dim) entry.
inline bool is_live(int64_t e, int64_t offset, int64_t width) {
  return e >= offset && e < offset + width;
}

template <class T>
Problem<T> make_problem(const Case& c, uint64_t seed) {
  Problem<T> p;
  const int64_t hd = c.heads * c.head_dim;
  p.shape = {c.batch, c.heads, c.q_len, c.k_len, c.head_dim, 0, 0, 0, 0};
  Rng rng(seed);
  auto fill = [&](std::vector<T>& buf, int64_t tokens, int64_t stride, int64_t offset) {
    for (int64_t t = 0; t < tokens; ++t)
      for (int64_t e = 0; e < hd; ++e) buf[t * stride + offset + e] = static_cast<T>(rng.normal());
  };
  if (c.packed_qkv) {
    // One projection output [batch, len, 3*hd]: q at 0, k at hd, v at 2*hd in each token row.
    p.qs = p.ks = p.vs = 3 * hd;
    p.qkv.assign(c.batch * c.q_len * 3 * hd, static_cast<T>(kSentinel));
    fill(p.qkv, c.batch * c.q_len, 3 * hd, 0);
    fill(p.qkv, c.batch * c.q_len, 3 * hd, hd);
    fill(p.qkv, c.batch * c.q_len, 3 * hd, 2 * hd);
    p.qp = p.qkv.data();
    p.kp = p.qkv.data() + hd;
    p.vp = p.qkv.data() + 2 * hd;
  } else {
    p.qs = hd + c.q_pad;
    p.ks = hd + c.k_pad;
    p.vs = hd + c.v_pad;
    p.q.assign(c.batch * c.q_len * p.qs, static_cast<T>(kSentinel));
    p.k.assign(c.batch * c.k_len * p.ks, static_cast<T>(kSentinel));
    p.v.assign(c.batch * c.k_len * p.vs, static_cast<T>(kSentinel));
    fill(p.q, c.batch * c.q_len, p.qs, 0);
    fill(p.k, c.batch * c.k_len, p.ks, 0);
    fill(p.v, c.batch * c.k_len, p.vs, 0);
    p.qp = p.q.data();
    p.kp = p.k.data();
    p.vp = p.v.data();
  }
  p.os = hd + c.o_pad;
  p.shape.q_stride = (c.packed_qkv || c.q_pad) ? p.qs : 0;  // 0 also exercises "dense"
  p.shape.k_stride = (c.packed_qkv || c.k_pad) ? p.ks : 0;
  p.shape.v_stride = (c.packed_qkv || c.v_pad) ? p.vs : 0;
  p.shape.o_stride = c.o_pad ? p.os : 0;
  p.out.assign(c.batch * c.q_len * p.os, static_cast<T>(kSentinel));
  p.head_scales.resize(c.heads);
  p.alibi.resize(c.heads);
  for (int64_t h = 0; h < c.heads; ++h) {
    p.head_scales[h] = static_cast<T>(0.3 + 0.4 * h + 0.1 * rng.normal());
    p.alibi[h] = static_cast<T>(std::pow(0.5, h + 1));
  }
  p.bias.resize(c.heads * c.q_len * c.k_len);
  for (auto& b : p.bias) b = static_cast<T>(0.5 * rng.normal());
  p.key_lengths = c.key_lengths;
  return p;
}

// The oracle: the header's math, one (b, h, i) at a time, in long double. Returns out in the
// dense layout [batch, q_len, heads, head_dim] and p as [batch, heads, q_len, k_len].
struct OracleOut {
  std::vector<double> out, probs;
};
template <class T>
OracleOut oracle(const Case& c, const Problem<T>& p) {
  using L = long double;
  const int64_t D = c.head_dim, H = c.heads;
  OracleOut r;
  r.out.assign(c.batch * c.q_len * H * D, 0.0);
  r.probs.assign(c.batch * H * c.q_len * c.k_len, 0.0);
  for (int64_t b = 0; b < c.batch; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < c.q_len; ++i) {
        const int64_t ii = i + c.k_len - c.q_len;  // the query's position on the key axis
        std::vector<L> s(c.k_len);
        std::vector<bool> live(c.k_len);
        for (int64_t j = 0; j < c.k_len; ++j) {
          live[j] = !(c.causal && j > ii) &&
                    !(!c.key_lengths.empty() && j >= c.key_lengths[b]);
          L raw = 0;
          for (int64_t d = 0; d < D; ++d)
            raw += static_cast<L>(p.qp[(b * c.q_len + i) * p.qs + h * D + d]) *
                   p.kp[(b * c.k_len + j) * p.ks + h * D + d];
          L x = (c.head_scales ? static_cast<L>(p.head_scales[h]) : static_cast<L>(c.scale)) * raw;
          if (c.softcap > 0) x = c.softcap * std::tanh(x / c.softcap);
          if (c.bias) x += p.bias[(h * c.q_len + i) * c.k_len + j];
          if (c.alibi) x -= static_cast<L>(p.alibi[h]) * std::llabs(ii - j);
          s[j] = x;
        }
        L m = -std::numeric_limits<L>::infinity();
        for (int64_t j = 0; j < c.k_len; ++j)
          if (live[j]) m = std::max(m, s[j]);
        L z = 0;
        for (int64_t j = 0; j < c.k_len; ++j)
          if (live[j]) z += std::exp(s[j] - m);
        for (int64_t j = 0; j < c.k_len; ++j) {
          const L pj = live[j] ? std::exp(s[j] - m) / z : 0;
          r.probs[((b * H + h) * c.q_len + i) * c.k_len + j] = static_cast<double>(pj);
          for (int64_t d = 0; d < D; ++d)
            r.out[((b * c.q_len + i) * H + h) * D + d] +=
                static_cast<double>(pj * p.vp[(b * c.k_len + j) * p.vs + h * D + d]);
        }
      }
  return r;
}

template <class T>
double out_at(const Case& c, const Problem<T>& p, int64_t dense_index) {
  const int64_t hd = c.heads * c.head_dim;
  return p.out[(dense_index / hd) * p.os + dense_index % hd];
}

// Every cell of the out buffer outside the live [heads*head_dim] part of a row must be intact.
template <class T>
void expect_padding_intact(const std::vector<T>& buf, int64_t tokens, int64_t stride,
                           int64_t offset, int64_t width, const char* what) {
  for (int64_t t = 0; t < tokens; ++t)
    for (int64_t e = 0; e < stride; ++e)
      if (!is_live(e, offset, width)) {
        ASSERT_EQ(buf[t * stride + e], static_cast<T>(kSentinel))
            << what << ": padding written at token " << t << " element " << e;
      }
}

std::vector<Case> all_cases() {
  std::vector<Case> cs;
  Case c;
  c.name = "plain";
  cs.push_back(c);
  c = Case{};
  c.name = "causal";
  c.causal = true;
  cs.push_back(c);
  c = Case{};
  c.name = "key_lengths";
  c.key_lengths = {4, 2};
  cs.push_back(c);
  c = Case{};
  c.name = "key_lengths_zero";  // batch 1 has no visible key: its rows are all zero
  c.key_lengths = {3, 0};
  cs.push_back(c);
  c = Case{};
  c.name = "softcap";
  c.scale = 1.0;
  c.head_dim = 4;
  c.softcap = 1.5;
  cs.push_back(c);
  c = Case{};
  c.name = "alibi";
  c.alibi = true;
  cs.push_back(c);
  c = Case{};
  c.name = "bias";
  c.bias = true;
  cs.push_back(c);
  c = Case{};
  c.name = "head_scales";
  c.head_scales = true;
  c.scale = 100.0;  // must be ignored when head_scales is given
  cs.push_back(c);
  c = Case{};
  c.name = "cross_qlen3_klen6_padded";
  c.q_len = 3;
  c.k_len = 6;
  c.key_lengths = {5, 6};
  cs.push_back(c);
  c = Case{};
  c.name = "cross_causal_qlen3_klen5";  // i' = i + 2
  c.q_len = 3;
  c.k_len = 5;
  c.causal = true;
  c.alibi = true;
  cs.push_back(c);
  c = Case{};
  c.name = "cross_causal_qlen5_klen3";  // the first two query rows see no key
  c.q_len = 5;
  c.k_len = 3;
  c.causal = true;
  cs.push_back(c);
  c = Case{};
  c.name = "strided";
  c.q_pad = 3;
  c.k_pad = 1;
  c.v_pad = 5;
  c.o_pad = 2;
  cs.push_back(c);
  c = Case{};
  c.name = "packed_qkv_causal";
  c.packed_qkv = true;
  c.causal = true;
  c.heads = 3;
  c.head_dim = 2;
  cs.push_back(c);
  c = Case{};
  c.name = "everything";
  c.batch = 2;
  c.heads = 3;
  c.q_len = 3;
  c.k_len = 5;
  c.head_dim = 4;
  c.q_pad = 2;
  c.k_pad = 3;
  c.v_pad = 1;
  c.o_pad = 4;
  c.head_scales = true;
  c.softcap = 2.0;
  c.bias = true;
  c.alibi = true;
  c.causal = true;
  c.key_lengths = {5, 4};
  cs.push_back(c);
  c = Case{};
  c.name = "single_token";
  c.batch = 1;
  c.heads = 1;
  c.q_len = 1;
  c.k_len = 1;
  c.head_dim = 1;
  c.causal = true;
  cs.push_back(c);
  return cs;
}

class Attention : public ::testing::TestWithParam<Case> {};

// ---- forward against the oracle, double and float --------------------------------------------

template <class T>
void check_forward(const Case& c, double tol) {
  Problem<T> p = make_problem<T>(c, 7);
  const auto opt = p.options(c);
  AttentionSaved<T> saved;
  attention_naive_forward(p.shape, opt, p.qp, p.kp, p.vp, p.out.data(), saved);
  const OracleOut o = oracle(c, p);
  double scale = 1e-30;
  for (double x : o.out) scale = std::max(scale, std::abs(x));
  for (size_t i = 0; i < o.out.size(); ++i)
    ASSERT_NEAR(out_at(c, p, i), o.out[i], tol * scale) << "out (dense index " << i << ")";
  ASSERT_EQ(saved.probs.numel(), static_cast<int64_t>(o.probs.size()));
  for (size_t i = 0; i < o.probs.size(); ++i)
    ASSERT_NEAR(saved.probs[i], o.probs[i], tol) << "probs at " << i;
  expect_padding_intact(p.out, c.batch * c.q_len, p.os, 0, c.heads * c.head_dim, "out");
  // The inputs (and their padding) are read-only.
  Problem<T> fresh = make_problem<T>(c, 7);
  EXPECT_EQ(p.q, fresh.q);
  EXPECT_EQ(p.k, fresh.k);
  EXPECT_EQ(p.v, fresh.v);
  EXPECT_EQ(p.qkv, fresh.qkv);
}

TEST_P(Attention, ForwardDoubleMatchesOracle) { check_forward<double>(GetParam(), 1e-13); }
TEST_P(Attention, ForwardFloatMatchesOracle) {
  check_forward<float>(GetParam(), GetParam().float_tol);
}

// ---- backward: finite differences in double ---------------------------------------------------

TEST_P(Attention, BackwardMatchesCentralDifferences) {
  const testing::ScopedThreads one_thread(1);
  const Case c = GetParam();
  Problem<double> p = make_problem<double>(c, 11);
  const auto opt = p.options(c);
  const int64_t hd = c.heads * c.head_dim;
  const int64_t q_tokens = c.batch * c.q_len, k_tokens = c.batch * c.k_len;
  // Random loss weights w in the out layout; dout's padding holds NaN (it must not be read).
  std::vector<double> w(p.out.size(), std::numeric_limits<double>::quiet_NaN());
  Rng rng(12);
  for (int64_t t = 0; t < q_tokens; ++t)
    for (int64_t e = 0; e < hd; ++e) w[t * p.os + e] = rng.normal();
  AttentionSaved<double> saved;
  auto loss = [&] {
    attention_naive_forward(p.shape, opt, p.qp, p.kp, p.vp, p.out.data(), saved);
    double l = 0;
    for (int64_t t = 0; t < q_tokens; ++t)
      for (int64_t e = 0; e < hd; ++e) l += w[t * p.os + e] * p.out[t * p.os + e];
    return l;
  };
  loss();
  // Gradient buffers in the inputs' layouts, padding pre-filled with the sentinel.
  std::vector<double> dqkv(p.qkv.size(), kSentinel), dq(p.q.size(), kSentinel),
      dk(p.k.size(), kSentinel), dv(p.v.size(), kSentinel);
  double *dqp = dq.data(), *dkp = dk.data(), *dvp = dv.data();
  if (c.packed_qkv) dqp = dqkv.data(), dkp = dqkv.data() + hd, dvp = dqkv.data() + 2 * hd;
  // The optional gradients accumulate: start them at a known offset.
  std::vector<double> dscales(c.heads, 0.25), dbias(p.bias.size(), -0.5);
  AttentionExtraGrads<double> extra;
  extra.dhead_scales = dscales.data();
  extra.dbias = c.bias ? dbias.data() : nullptr;
  attention_naive_backward(p.shape, opt, p.qp, p.kp, p.vp, w.data(), saved, dqp, dkp, dvp, extra);
  for (auto& g : dscales) g -= 0.25;
  if (c.bias)
    for (auto& g : dbias) g += 0.5;

  // Padding of the gradient buffers untouched; then zero it for the FD comparison (the true
  // derivative of L with respect to padding is 0, so FD also proves the forward never reads it).
  std::vector<testing::FdInput> inputs;
  if (c.packed_qkv) {
    expect_padding_intact(dqkv, q_tokens, 3 * hd, 0, 3 * hd, "dqkv");
    inputs.push_back({p.qkv.data(), static_cast<int64_t>(p.qkv.size()), "qkv", dqkv.data()});
  } else {
    expect_padding_intact(dq, q_tokens, p.qs, 0, hd, "dq");
    expect_padding_intact(dk, k_tokens, p.ks, 0, hd, "dk");
    expect_padding_intact(dv, k_tokens, p.vs, 0, hd, "dv");
    for (auto* buf : {&dq, &dk, &dv})
      for (auto& g : *buf)
        if (g == kSentinel) g = 0;
    inputs.push_back({p.q.data(), static_cast<int64_t>(p.q.size()), "q", dq.data()});
    inputs.push_back({p.k.data(), static_cast<int64_t>(p.k.size()), "k", dk.data()});
    inputs.push_back({p.v.data(), static_cast<int64_t>(p.v.size()), "v", dv.data()});
  }
  if (c.head_scales) {
    inputs.push_back({p.head_scales.data(), c.heads, "head_scales", dscales.data()});
  } else {
    // Without head_scales the extra gradient is dL/dscale of the shared scale, per head; check
    // the sum over heads against perturbing opt.scale.
    double dscale_total = 0;
    for (double g : dscales) dscale_total += g;
    double scale_value = c.scale;
    auto loss_scale = [&] {
      auto o2 = opt;
      o2.scale = scale_value;
      attention_naive_forward(p.shape, o2, p.qp, p.kp, p.vp, p.out.data(), saved);
      double l = 0;
      for (int64_t t = 0; t < q_tokens; ++t)
        for (int64_t e = 0; e < hd; ++e) l += w[t * p.os + e] * p.out[t * p.os + e];
      return l;
    };
    const auto rs = testing::check_gradients(loss_scale, {{&scale_value, 1, "scale", &dscale_total}});
    EXPECT_LT(rs.worst_rel_error, c.fd_tol) << rs;
  }
  if (c.bias) inputs.push_back({p.bias.data(), static_cast<int64_t>(p.bias.size()), "bias", dbias.data()});
  const auto r = testing::check_gradients(loss, inputs);
  EXPECT_LT(r.worst_rel_error, c.fd_tol) << c.name << ": " << r;
  EXPECT_GT(r.checked, 0);
  std::cout << "[ fd       ] " << c.name << ": " << r << "\n";
}

// The float backward agrees with the (FD-proven) double backward on the same inputs.
TEST_P(Attention, BackwardFloatMatchesDouble) {
  const Case c = GetParam();
  Problem<double> pd = make_problem<double>(c, 21);
  Problem<float> pf = make_problem<float>(c, 21);
  // Make the double problem hold exactly the float values.
  auto round = [](std::vector<double>& d, const std::vector<float>& f) {
    for (size_t i = 0; i < d.size(); ++i) d[i] = f[i];
  };
  round(pd.q, pf.q), round(pd.k, pf.k), round(pd.v, pf.v), round(pd.qkv, pf.qkv);
  round(pd.head_scales, pf.head_scales), round(pd.bias, pf.bias), round(pd.alibi, pf.alibi);
  const int64_t hd = c.heads * c.head_dim;
  std::vector<float> wf(pf.out.size(), 0.f);
  Rng rng(22);
  for (int64_t t = 0; t < c.batch * c.q_len; ++t)
    for (int64_t e = 0; e < hd; ++e) wf[t * pf.os + e] = static_cast<float>(rng.normal());
  const std::vector<double> wd(wf.begin(), wf.end());
  AttentionSaved<float> sf;
  AttentionSaved<double> sd;
  attention_naive_forward(pf.shape, pf.options(c), pf.qp, pf.kp, pf.vp, pf.out.data(), sf);
  attention_naive_forward(pd.shape, pd.options(c), pd.qp, pd.kp, pd.vp, pd.out.data(), sd);
  auto run = [&](auto& p, auto& saved, const auto& w, auto zero) {
    using T = decltype(zero);
    const size_t n = c.packed_qkv ? p.qkv.size() : 0;
    std::vector<T> dqkv(n, 0), dq(p.q.size(), 0), dk(p.k.size(), 0), dv(p.v.size(), 0),
        ds(c.heads, 0), db(p.bias.size(), 0);
    T *dqp = dq.data(), *dkp = dk.data(), *dvp = dv.data();
    if (c.packed_qkv) dqp = dqkv.data(), dkp = dqkv.data() + hd, dvp = dqkv.data() + 2 * hd;
    attention_naive_backward(p.shape, p.options(c), p.qp, p.kp, p.vp, w.data(), saved, dqp, dkp,
                             dvp, AttentionExtraGrads<T>{ds.data(), db.data()});
    std::vector<double> all;
    for (auto* v : {&dqkv, &dq, &dk, &dv, &ds, &db}) all.insert(all.end(), v->begin(), v->end());
    return all;
  };
  const auto gf = run(pf, sf, wf, 0.f);
  const auto gd = run(pd, sd, wd, 0.0);
  ASSERT_EQ(gf.size(), gd.size());
  double scale = 1e-30;
  for (double g : gd) scale = std::max(scale, std::abs(g));
  for (size_t i = 0; i < gd.size(); ++i)
    ASSERT_NEAR(gf[i], gd[i], 1e-5 * scale) << "gradient element " << i;
}

INSTANTIATE_TEST_SUITE_P(Options, Attention, ::testing::ValuesIn(all_cases()),
                         [](const ::testing::TestParamInfo<Case>& info) { return info.param.name; });

// ---- known answers --------------------------------------------------------------------------

// One head, dense layout helpers.
struct Small {
  AttentionShape shape;
  std::vector<double> q, k, v, out;
  AttentionSaved<double> saved;
  Small(int64_t q_len, int64_t k_len, int64_t d)
      : shape{1, 1, q_len, k_len, d, 0, 0, 0, 0}, q(q_len * d), k(k_len * d), v(k_len * d),
        out(q_len * d, kSentinel) {
    Rng rng(q_len * 100 + k_len);
    for (auto& x : q) x = rng.normal();
    for (auto& x : k) x = rng.normal();
    for (auto& x : v) x = rng.normal();
  }
  void run(const AttentionOptions<double>& opt) {
    attention_naive_forward(shape, opt, q.data(), k.data(), v.data(), out.data(), saved);
  }
  double p(int64_t i, int64_t j) const { return saved.probs[i * shape.k_len + j]; }
};

TEST(AttentionKnown, AllEqualKeysAverageV) {
  Small s(3, 5, 4);
  for (int64_t j = 1; j < 5; ++j)
    for (int64_t d = 0; d < 4; ++d) s.k[j * 4 + d] = s.k[d];
  AttentionOptions<double> opt;
  opt.scale = 3.0;
  s.run(opt);
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t d = 0; d < 4; ++d) {
      double mean = 0;
      for (int64_t j = 0; j < 5; ++j) mean += s.v[j * 4 + d] / 5;
      EXPECT_NEAR(s.out[i * 4 + d], mean, 1e-14);
    }
  // With key_lengths = 2, only the first two values are averaged.
  const int32_t len = 2;
  opt.key_lengths = &len;
  s.run(opt);
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t d = 0; d < 4; ++d)
      EXPECT_NEAR(s.out[i * 4 + d], (s.v[d] + s.v[4 + d]) / 2, 1e-14);
}

TEST(AttentionKnown, CausalFirstQueryAttendsOnlyToKeyZero) {
  Small s(4, 4, 3);
  AttentionOptions<double> opt;
  opt.causal = true;
  s.run(opt);
  EXPECT_EQ(s.p(0, 0), 1.0);
  for (int64_t j = 1; j < 4; ++j) EXPECT_EQ(s.p(0, j), 0.0);
  for (int64_t d = 0; d < 3; ++d) EXPECT_NEAR(s.out[d], s.v[d], 1e-15);
  // Row i sees exactly keys 0..i.
  for (int64_t i = 0; i < 4; ++i) {
    double sum = 0;
    for (int64_t j = 0; j < 4; ++j) {
      if (j > i) {
        EXPECT_EQ(s.p(i, j), 0.0) << i << "," << j;
      } else {
        EXPECT_GT(s.p(i, j), 0.0) << i << "," << j;
      }
      sum += s.p(i, j);
    }
    EXPECT_NEAR(sum, 1.0, 1e-15);
  }
}

TEST(AttentionKnown, FullyMaskedRowsGiveZeroOutputAndZeroGradients) {
  Small s(2, 3, 2);
  AttentionOptions<double> opt;
  const int32_t len = 0;
  opt.key_lengths = &len;
  s.run(opt);
  for (double o : s.out) EXPECT_EQ(o, 0.0);
  for (int64_t j = 0; j < 3; ++j) EXPECT_EQ(s.p(0, j), 0.0);
  std::vector<double> dout(s.out.size(), 1.0), dq(s.q.size(), 9), dk(s.k.size(), 9),
      dv(s.v.size(), 9), dsc(1, 0.0);
  attention_naive_backward(s.shape, opt, s.q.data(), s.k.data(), s.v.data(), dout.data(), s.saved,
                           dq.data(), dk.data(), dv.data(), AttentionExtraGrads<double>{dsc.data()});
  for (auto* g : {&dq, &dk, &dv})
    for (double x : *g) EXPECT_EQ(x, 0.0);
  EXPECT_EQ(dsc[0], 0.0);
}

TEST(AttentionKnown, SoftcapBoundsTheLogits) {
  // Two keys with q·k = 100 and 0; cap 1: logits tanh(100) = 1 and 0, so p = (e, 1) / (e + 1).
  Small s(1, 2, 1);
  s.q = {10.0};
  s.k = {10.0, 0.0};
  s.v = {1.0, 0.0};
  AttentionOptions<double> opt;
  opt.softcap = 1.0;
  s.run(opt);
  const double e = std::exp(1.0);
  EXPECT_NEAR(s.p(0, 0), e / (e + 1), 1e-15);
  EXPECT_NEAR(s.out[0], e / (e + 1), 1e-15);
}

TEST(AttentionKnown, AlibiAndBiasWithZeroQueries) {
  // q = 0: every q·k is 0, so p_i = softmax(bias_i - slope |i' - j|).
  Small s(2, 4, 2);
  std::fill(s.q.begin(), s.q.end(), 0.0);
  const double slope = 0.7;
  std::vector<double> bias(2 * 4);
  for (size_t e = 0; e < bias.size(); ++e) bias[e] = 0.1 * static_cast<double>(e) - 0.3;
  AttentionOptions<double> opt;
  opt.alibi_slopes = &slope;
  opt.bias = bias.data();
  s.run(opt);
  for (int64_t i = 0; i < 2; ++i) {
    const int64_t ii = i + 2;  // k_len - q_len = 2
    double z = 0;
    for (int64_t j = 0; j < 4; ++j) z += std::exp(bias[i * 4 + j] - slope * std::abs(ii - j));
    for (int64_t j = 0; j < 4; ++j)
      EXPECT_NEAR(s.p(i, j), std::exp(bias[i * 4 + j] - slope * std::abs(ii - j)) / z, 1e-15)
          << i << "," << j;
  }
}

TEST(AttentionKnown, ZeroHeadScaleGivesUniformAttentionWhateverTheScale) {
  Small s(2, 3, 2);
  const double zero = 0.0;
  AttentionOptions<double> opt;
  opt.scale = 50.0;
  opt.head_scales = &zero;
  s.run(opt);
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j) EXPECT_NEAR(s.p(i, j), 1.0 / 3, 1e-15);
}

TEST(AttentionKnown, RejectsEmptyShapes) {
  Small s(1, 1, 1);
  AttentionShape bad = s.shape;
  bad.k_len = 0;
  EXPECT_THROW(attention_naive_forward(bad, AttentionOptions<double>{}, s.q.data(), s.k.data(),
                                       s.v.data(), s.out.data(), s.saved),
               Error);
}

}  // namespace
}  // namespace scalelab
