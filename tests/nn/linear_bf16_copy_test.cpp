// Bf16Copy and gemm_operands (kernels/gemm.hpp), and Linear<float>'s use of them: where the float
// GEMMs run oneDNN's bf16 matmul, an operand converted once gives bit for bit what converting it
// inside every GEMM gives, and the copy is what the GEMM reads (operand values replaced by
// garbage change nothing); elsewhere no copy is made and the floats are used. Linear's forward and
// backward with matmul_precision bf16 equal the plain GEMM calls on its floats, bit for bit. A
// GEMM's bf16_out is the bf16 copy of its final C on every path and thread count, and a chain of
// layers handing copies on (the FFN: a ReLU layer's output copy into the next layer's forward, its
// dx copy into the previous layer's backward) equals the same chain without them, bit for bit; a
// copy of another tensor is not used.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "scalelab/core/parallel.hpp"
#include "scalelab/core/rng.hpp"
#include "scalelab/kernels/bf16_convert.hpp"
#include "scalelab/kernels/column_sums.hpp"
#include "scalelab/kernels/gemm.hpp"
#include "scalelab/kernels/precision.hpp"
#include "scalelab/nn/feed_forward.hpp"
#include "scalelab/nn/linear.hpp"

namespace scalelab {
namespace {

std::vector<float> random_vector(int64_t n, uint64_t seed) {
  Rng rng(seed);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = static_cast<float>(rng.uniform(-1.0, 1.0));
  return v;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

TEST(Bf16Copy, GemmFromCopiesEqualsGemmFromFloatsAndReadsTheCopies) {
  const ScopedMatmulPrecision bf16(MatmulPrecision::bf16);
  const bool hardware = bf16_matmul_uses_hardware();
  for (bool trans_a : {false, true})
    for (bool trans_b : {false, true}) {
      const GemmShape s{.m = 37, .n = 70, .k = 45, .trans_a = trans_a, .trans_b = trans_b};
      const std::vector<float> a = random_vector(s.m * s.k, 1), b = random_vector(s.k * s.n, 2);
      const std::vector<float> bias = random_vector(s.n, 3);
      std::vector<float> c0 = random_vector(s.m * s.n, 4), c1 = c0;
      gemm<float>(s, a.data(), b.data(), c0.data(), 0.5f, 1.0f);
      Bf16Copy a_copy, b_copy;
      const uint16_t* a_bits = a_copy.convert(a.data(), s.m * s.k);
      const uint16_t* b_bits = b_copy.convert(b.data(), s.k * s.n);
      EXPECT_EQ(a_bits != nullptr, hardware);
      EXPECT_EQ(a_copy.bits(), a_bits);
      gemm_operands(s, {a.data(), a_bits}, {b.data(), b_bits}, c1.data(), 0.5f, 1.0f);
      EXPECT_TRUE(same_bits(c0, c1)) << "trans_a " << trans_a << " trans_b " << trans_b;

      // With the epilogue (as gemm_bias_act), and values that are not the copies' operands: where
      // the copies are used the result is unchanged, elsewhere the garbage is what is multiplied.
      std::vector<float> e0(static_cast<size_t>(s.m * s.n)), e1 = e0;
      gemm_bias_act<float>(s, a.data(), b.data(), e0.data(), {.bias = bias.data(), .relu = true});
      const std::vector<float> garbage(a.size(), 7.0f);
      gemm_operands(s, {garbage.data(), a_bits}, {b.data(), b_bits}, e1.data(), 1.0f, 0.0f,
                    {.bias = bias.data(), .relu = true});
      EXPECT_EQ(same_bits(e0, e1), hardware) << "trans_a " << trans_a << " trans_b " << trans_b;
    }
}

TEST(Bf16Copy, NoCopyInF32) {
  const ScopedMatmulPrecision f32(MatmulPrecision::f32);
  const std::vector<float> x = random_vector(100, 5);
  Bf16Copy copy;
  EXPECT_EQ(copy.convert(x.data(), 100), nullptr);
  EXPECT_EQ(copy.bits(), nullptr);
}

// Linear<float> in bf16 against its GEMMs called on the floats, for the plain, ReLU-fused and
// ReLU-masked paths, and in f32 (where no copy is made).
TEST(Bf16Copy, LinearEqualsItsGemmsBitForBit) {
  const int64_t rows = 50, in = 24, out = 40;
  for (MatmulPrecision precision : {MatmulPrecision::bf16, MatmulPrecision::f32}) {
    const ScopedMatmulPrecision scoped(precision);
    Linear<float> layer("fc", in, out);
    const std::vector<float> w = random_vector(out * in, 6), bias = random_vector(out, 7);
    std::memcpy(layer.weight().value.data(), w.data(), w.size() * sizeof(float));
    std::memcpy(layer.bias().value.data(), bias.data(), bias.size() * sizeof(float));
    const std::vector<float> x = random_vector(rows * in, 8), dy = random_vector(rows * out, 9);
    const std::vector<float> mask = random_vector(rows * in, 10);
    for (bool relu : {false, true}) {
      layer.weight().grad.zero();
      std::vector<float> y(static_cast<size_t>(rows * out)), dx(static_cast<size_t>(rows * in));
      if (relu)
        layer.forward_relu(x.data(), rows, y.data());
      else
        layer.forward(x.data(), rows, y.data());
      layer.backward(dy.data(), dx.data(), false, relu ? mask.data() : nullptr);

      std::vector<float> y_ref(y.size()), dx_ref(dx.size()), dw_ref(w.size(), 0.0f);
      gemm_bias_act<float>({.m = rows, .n = out, .k = in, .trans_b = true}, x.data(), w.data(),
                           y_ref.data(), {.bias = bias.data(), .relu = relu});
      gemm<float>({.m = out, .n = in, .k = rows, .trans_a = true}, dy.data(), x.data(),
                  dw_ref.data(), 1.0f, 1.0f);
      gemm_bias_act<float>({.m = rows, .n = in, .k = out}, dy.data(), w.data(), dx_ref.data(),
                           {.keep_where_positive = relu ? mask.data() : nullptr});
      const std::vector<float> dw(layer.weight().grad.data(), layer.weight().grad.data() + w.size());
      const char* name = matmul_precision_name(precision);
      EXPECT_TRUE(same_bits(y, y_ref)) << name << " relu " << relu;
      EXPECT_TRUE(same_bits(dw, dw_ref)) << name << " relu " << relu;
      EXPECT_TRUE(same_bits(dx, dx_ref)) << name << " relu " << relu;
    }
  }
}

TEST(Bf16Copy, GemmBf16OutIsTheCopyOfItsFinalC) {
  for (MatmulPrecision precision : {MatmulPrecision::bf16, MatmulPrecision::f32})
    for (int threads : {1, 2}) {
      const ScopedMatmulPrecision scoped_precision(precision);
      const ScopedNumThreads scoped_threads(threads);
      // a single band, two row bands, a shape that would take column bands, k = 0
      for (auto [m, n, k] : {std::tuple{37, 70, 45}, std::tuple{300, 40, 64},
                             std::tuple{40, 200, 70}, std::tuple{9, 5, 0}})
        for (bool relu : {false, true}) {
          const GemmShape s{.m = m, .n = n, .k = k, .trans_b = true};
          const std::vector<float> a = random_vector(m * std::max(k, 1), 11);
          const std::vector<float> b = random_vector(n * std::max(k, 1), 12);
          const std::vector<float> bias = random_vector(n, 13), mask = random_vector(m * n, 14);
          const GemmEpilogue<float> plain{.bias = bias.data(), .relu = relu,
                                          .keep_where_positive = relu ? nullptr : mask.data()};
          std::vector<float> c0(static_cast<size_t>(m * n)), c1 = c0;
          gemm_operands(s, {a.data()}, {b.data()}, c0.data(), 1.0f, 0.0f, plain);
          std::vector<uint16_t> out(static_cast<size_t>(m * n), 0xFFFF), want(out.size());
          GemmEpilogue<float> with_copy = plain;
          with_copy.bf16_out = out.data();
          gemm_operands(s, {a.data()}, {b.data()}, c1.data(), 1.0f, 0.0f, with_copy);
          f32_to_bf16_row(c0.data(), m * n, want.data());
          const std::string where = std::string(matmul_precision_name(precision)) + " threads " +
                                    std::to_string(threads) + " m " + std::to_string(m) + " n " +
                                    std::to_string(n) + " k " + std::to_string(k) + " relu " +
                                    std::to_string(relu);
          EXPECT_TRUE(same_bits(c0, c1)) << where;
          EXPECT_EQ(out, want) << where;
        }
    }
}

TEST(Bf16Copy, ReserveKeepsRoomOnlyWhereCopiesAreKeptAndBitsOfChecksTheSource) {
  const std::vector<float> x = random_vector(64, 15), other = random_vector(64, 16);
  {
    const ScopedMatmulPrecision f32(MatmulPrecision::f32);
    Bf16Copy copy;
    EXPECT_EQ(copy.reserve(x.data(), 64), nullptr);
    EXPECT_EQ(copy.bits_of(x.data(), 64), nullptr);
  }
  const ScopedMatmulPrecision bf16(MatmulPrecision::bf16);
  Bf16Copy copy;
  const uint16_t* bits = copy.convert(x.data(), 64);
  EXPECT_EQ(bits != nullptr, bf16_matmul_uses_hardware());
  EXPECT_EQ(copy.bits_of(x.data(), 64), bits);
  EXPECT_EQ(copy.bits_of(other.data(), 64), nullptr);
  EXPECT_EQ(copy.bits_of(x.data(), 32), nullptr);
}

// fc1 (ReLU) then fc2, forward and backward as nn/feed_forward.cpp runs them, with and without the
// copies handed on; and fc2 handed a copy of another tensor.
TEST(Bf16Copy, LayersHandingCopiesOnEqualTheSameLayersWithoutThem) {
  const int64_t rows = 130, d = 24, hidden = 72;
  for (MatmulPrecision precision : {MatmulPrecision::bf16, MatmulPrecision::f32})
    for (int threads : {1, 2}) {
      const ScopedMatmulPrecision scoped_precision(precision);
      const ScopedNumThreads scoped_threads(threads);
      const std::vector<float> x = random_vector(rows * d, 17), dy = random_vector(rows * d, 18);
      struct Result {
        std::vector<float> y, dx, grads;
      };
      // mode 0: no copies; 1: copies handed on; 2: fc2 handed a copy of x (not its input)
      auto run = [&](int mode) {
        Linear<float> fc1("fc1", d, hidden), fc2("fc2", hidden, d);
        Rng rng(19);
        for (Linear<float>* l : {&fc1, &fc2})
          for (Parameter<float>* p : l->parameters()) {
            for (float& v : p->value) v = static_cast<float>(rng.uniform(-0.5, 0.5));
            p->grad.zero();
          }
        std::vector<float> a(static_cast<size_t>(rows * hidden)), da(a.size());
        Result r{std::vector<float>(static_cast<size_t>(rows * d)),
                 std::vector<float>(static_cast<size_t>(rows * d), 0.0f), {}};
        Bf16Copy a_copy, da_copy, x_copy;
        fc1.forward_relu(x.data(), rows, a.data(), mode == 1 ? &a_copy : nullptr);
        if (mode == 2) x_copy.convert(x.data(), rows * d);
        fc2.forward(a.data(), rows, r.y.data(), mode == 1 ? &a_copy : mode == 2 ? &x_copy : nullptr);
        if (mode == 1 && precision == MatmulPrecision::bf16 && bf16_matmul_uses_hardware()) {
          EXPECT_NE(a_copy.bits_of(a.data(), rows * hidden), nullptr);  // made by fc1's GEMM
          EXPECT_EQ(fc2.input_copy(), &a_copy);                          // and taken by fc2
        }
        if (mode == 2) {
          EXPECT_NE(fc2.input_copy(), &x_copy);
        }
        fc2.backward(dy.data(), da.data(), false, a.data(), mode == 1 ? &da_copy : nullptr);
        fc1.backward(da.data(), r.dx.data(), true, nullptr, nullptr, mode == 1 ? &da_copy : nullptr);
        for (Linear<float>* l : {&fc1, &fc2})
          for (Parameter<float>* p : l->parameters())
            r.grads.insert(r.grads.end(), p->grad.data(), p->grad.data() + p->grad.numel());
        return r;
      };
      const Result plain = run(0);
      for (int mode : {1, 2}) {
        const Result other = run(mode);
        const std::string where = std::string(matmul_precision_name(precision)) + " threads " +
                                  std::to_string(threads) + " mode " + std::to_string(mode);
        EXPECT_TRUE(same_bits(plain.y, other.y)) << where;
        EXPECT_TRUE(same_bits(plain.dx, other.dx)) << where;
        EXPECT_TRUE(same_bits(plain.grads, other.grads)) << where;
      }
    }
}

// The FFN's hidden layer held only as bf16 bits (Linear::forward_relu_to_bf16, backward_to_bf16,
// and the layers reading x and dy from bits-only copies) against the same two layers with float
// a and da and their copies. oneDNN rounds the f32 sums (plus the bias) into the bf16 C itself, so
// a's and da's bits are the copies' within one unit of bf16 (different sums' order for the two C
// types would make that); where they are all equal (oneDNN 2.6.3 on the CPUs seen) y, dx and
// every weight gradient are equal bit for bit too (every GEMM reads the same bits), elsewhere
// within what a unit of bf16 in their inputs moves them. fc1's bias gradient is the column sums of
// da's bf16 values (add_column_sums_plain of the widened bits), within 2^-8 of sum |da| of the f32
// sums. FeedForward takes this path where copies are kept; its results equal the two layers'.
TEST(Bf16Copy, HiddenLayerHeldAsBitsEqualsTheFloatHiddenLayer) {
  const ScopedMatmulPrecision scoped_precision(MatmulPrecision::bf16);
  if (!Bf16Copy::kept()) GTEST_SKIP() << "oneDNN's bf16 matmul does not run on this CPU";
  const int64_t rows = 130, d = 24, hidden = 72;
  // How many of n bf16 values differ, after checking each is within one unit of the other.
  auto differing = [](const uint16_t* x, const uint16_t* y, int64_t n, const std::string& where) {
    int count = 0, far = 0;
    for (int64_t i = 0; i < n; ++i) {
      const double u = bf16_bits_to_f32(x[i]), v = bf16_bits_to_f32(y[i]);
      count += x[i] != y[i];
      far += std::fabs(u - v) > std::ldexp(std::max(std::fabs(u), std::fabs(v)), -7) + 1e-30;
    }
    EXPECT_EQ(far, 0) << where << ": values more than one unit of bf16 apart";
    return count;
  };
  // Equal bit for bit, or (inputs a unit of bf16 apart somewhere) within 2^-6 of the largest |value|.
  auto expect_close = [](const std::vector<float>& want, const std::vector<float>& got, bool exact,
                         const std::string& where) {
    if (exact) {
      EXPECT_TRUE(same_bits(want, got)) << where;
      return;
    }
    float scale = 0;
    for (float v : want) scale = std::max(scale, std::fabs(v));
    for (size_t i = 0; i < want.size(); ++i)
      ASSERT_NEAR(want[i], got[i], std::ldexp(scale, -6)) << where << ", element " << i;
  };
  for (int threads : {1, 2}) {
    const ScopedNumThreads scoped_threads(threads);
    const std::vector<float> x = random_vector(rows * d, 27), dy = random_vector(rows * d, 28);
    auto init = [](const ParameterRefs<float>& params) {
      Rng rng(29);
      for (Parameter<float>* p : params) {
        for (float& v : p->value) v = static_cast<float>(rng.uniform(-0.5, 0.5));
        p->grad.zero();
      }
    };
    auto grad = [](Parameter<float>& p) {
      return std::vector<float>(p.grad.data(), p.grad.data() + p.grad.numel());
    };
    const std::string where = "threads " + std::to_string(threads);
    // float a and da, with their copies
    Linear<float> f1("fc1", d, hidden), f2("fc2", hidden, d);
    init({&f1.weight(), &f1.bias(), &f2.weight(), &f2.bias()});
    std::vector<float> a(static_cast<size_t>(rows * hidden)), da(a.size());
    std::vector<float> y_float(static_cast<size_t>(rows * d)), dx_float(y_float.size(), 0.0f);
    Bf16Copy a_copy, da_copy;
    f1.forward_relu(x.data(), rows, a.data(), &a_copy);
    f2.forward(a.data(), rows, y_float.data(), &a_copy);
    f2.backward(dy.data(), da.data(), false, a.data(), &da_copy);
    f1.backward(da.data(), dx_float.data(), true, nullptr, nullptr, &da_copy);
    // a and da as bits only
    Linear<float> b1("fc1", d, hidden), b2("fc2", hidden, d);
    init({&b1.weight(), &b1.bias(), &b2.weight(), &b2.bias()});
    std::vector<float> y_bits(y_float.size()), dx_bits(y_float.size(), 0.0f);
    Bf16Copy a_only, da_only;
    b1.forward_relu_to_bf16(x.data(), rows, a_only);
    const uint16_t* a_bits = a_only.bits_of(nullptr, rows * hidden);
    ASSERT_NE(a_bits, nullptr) << where;
    b2.forward(nullptr, rows, y_bits.data(), &a_only);
    b2.backward_to_bf16(dy.data(), da_only, a_bits);
    const uint16_t* da_bits = da_only.bits_of(nullptr, rows * hidden);
    ASSERT_NE(da_bits, nullptr) << where;
    b1.backward(nullptr, dx_bits.data(), true, nullptr, nullptr, &da_only);
    const int a_differ = differing(a_copy.bits(), a_bits, rows * hidden, where + ", a");
    const int da_differ = differing(da_copy.bits(), da_bits, rows * hidden, where + ", da");
    const bool exact = a_differ == 0 && da_differ == 0;
    expect_close(y_float, y_bits, exact, where + ", y");
    expect_close(dx_float, dx_bits, exact, where + ", dx");
    expect_close(grad(f1.weight()), grad(b1.weight()), exact, where + ", dW1");
    expect_close(grad(f2.weight()), grad(b2.weight()), exact, where + ", dW2");
    expect_close(grad(f2.bias()), grad(b2.bias()), exact, where + ", db2");
    std::vector<float> widened(static_cast<size_t>(rows * hidden)), db1(static_cast<size_t>(hidden), 0.0f);
    for (size_t i = 0; i < widened.size(); ++i) widened[i] = bf16_bits_to_f32(da_bits[i]);
    add_column_sums_plain(widened.data(), rows, hidden, db1.data());
    EXPECT_TRUE(same_bits(db1, grad(b1.bias()))) << where;
    // ... which differs from the float da's sums by bf16's rounding of each term only (at most
    // 2^-9 of it, or one more unit where da's bits differ; the bound 2^-8 of sum |da| also leaves
    // room for the f32 sums' own error)
    for (int64_t o = 0; o < hidden; ++o) {
      double magnitude = 0;
      for (int64_t r = 0; r < rows; ++r) magnitude += std::fabs(da[r * hidden + o]);
      EXPECT_NEAR(db1[o], f1.bias().grad.data()[o], std::ldexp(magnitude, exact ? -8 : -7))
          << where << ", column " << o;
    }

    // FeedForward (ReLU) takes the bits-only path: the same y, dx and gradients
    LayerOptions options;
    options.d_model = d, options.d_ff = hidden, options.activation = Activation::relu;
    FeedForward<float> ffn("ffn", options);
    const ParameterRefs<float> params = ffn.parameters();
    ASSERT_EQ(params.size(), 4u);
    init(params);
    std::vector<float> y_ffn(y_float.size()), dx_ffn(y_float.size(), 0.0f);
    ffn.forward(x.data(), rows, y_ffn.data());
    ffn.backward(dy.data(), dx_ffn.data());
    EXPECT_TRUE(same_bits(y_bits, y_ffn)) << where;
    EXPECT_TRUE(same_bits(dx_bits, dx_ffn)) << where;
    EXPECT_TRUE(same_bits(grad(b1.weight()), grad(*params[0]))) << where;
    EXPECT_TRUE(same_bits(grad(b1.bias()), grad(*params[1]))) << where;
  }
}

}  // namespace
}  // namespace scalelab
