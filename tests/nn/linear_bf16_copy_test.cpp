// Bf16Copy and gemm_operands (kernels/gemm.hpp), and Linear<float>'s use of them: where the float
// GEMMs run oneDNN's bf16 matmul, an operand converted once gives bit for bit what converting it
// inside every GEMM gives, and the copy is what the GEMM reads (operand values replaced by
// garbage change nothing); elsewhere no copy is made and the floats are used. Linear's forward and
// backward with matmul_precision bf16 equal the plain GEMM calls on its floats, bit for bit. A
// GEMM's bf16_out is the bf16 copy of its final C on every path and thread count, and a chain of
// layers handing copies on (the FFN: a ReLU layer's output copy into the next layer's forward, its
// dx copy into the previous layer's backward) equals the same chain without them, bit for bit; a
// copy of another tensor is not used.
#include <cmath>
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "scalelab/core/parallel.hpp"
#include "scalelab/core/rng.hpp"
#include "scalelab/kernels/bf16_convert.hpp"
#include "scalelab/kernels/gemm.hpp"
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

}  // namespace
}  // namespace scalelab
