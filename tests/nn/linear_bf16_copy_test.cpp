// Bf16Copy and gemm_operands (kernels/gemm.hpp), and Linear<float>'s use of them: where the float
// GEMMs run oneDNN's bf16 matmul, an operand converted once gives bit for bit what converting it
// inside every GEMM gives, and the copy is what the GEMM reads (operand values replaced by
// garbage change nothing); elsewhere no copy is made and the floats are used. Linear's forward and
// backward with matmul_precision bf16 equal the plain GEMM calls on its floats, bit for bit.
#include <cmath>
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "scalelab/core/rng.hpp"
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

}  // namespace
}  // namespace scalelab
