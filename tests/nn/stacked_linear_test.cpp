// nn/stacked_linear: Linear layers of one input run as one GEMM each way. Its backward against
// finite differences (double); forward and backward against the same layers run one by one
// (double to round-off, float in f32 and with the GEMMs in bf16 to the float summation order),
// gradients added to what the layers held; mismatched layers rejected. MultiHeadAttention's
// probe views (kernel_q, kernel_k, kernel_v) of stacked projections equal the projections.
#include "scalelab/nn/stacked_linear.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "scalelab/core/error.hpp"
#include "scalelab/core/rng.hpp"
#include "scalelab/nn/attention.hpp"
#include "support/finite_difference.hpp"

namespace scalelab {
namespace {

template <class T>
void fill_random(Tensor<T>& t, Rng& rng) {
  for (T& v : t) v = static_cast<T>(rng.uniform(-1.0, 1.0));
}

// Three layers of 6 inputs and 5, 7, 3 outputs (a stack of 15 columns).
template <class T>
std::vector<Linear<T>> make_layers(bool bias, Rng& rng) {
  std::vector<Linear<T>> layers;
  for (int64_t out : {5, 7, 3}) layers.emplace_back("p" + std::to_string(out), 6, out, bias);
  for (Linear<T>& l : layers)
    for (Parameter<T>* p : l.parameters()) {
      fill_random(p->value, rng);
      fill_random(p->grad, rng);  // gradients are added to what the layers hold
    }
  return layers;
}

template <class T>
std::vector<Linear<T>*> pointers(std::vector<Linear<T>>& layers) {
  std::vector<Linear<T>*> out;
  for (Linear<T>& l : layers) out.push_back(&l);
  return out;
}

double max_abs_diff(const Tensor<double>& a, const Tensor<double>& b) {
  double worst = 0;
  for (int64_t i = 0; i < a.numel(); ++i) worst = std::max(worst, std::abs(a[i] - b[i]));
  return worst;
}

// Stacked against one by one: y's column blocks, dx (overwritten and accumulated), every
// parameter's gradient; |difference| <= tol · (1 + |value|).
template <class T>
void expect_stacked_equals_separate(bool bias, bool accumulate, double tol) {
  Rng rng(5);
  const int64_t rows = 11, in = 6, width = 15;
  std::vector<Linear<T>> stacked_layers = make_layers<T>(bias, rng);
  std::vector<Linear<T>> separate_layers = stacked_layers;  // the same values and gradients
  Tensor<T> x({rows, in}), dy({rows, width}), y({rows, width}), dx0({rows, in});
  fill_random(x, rng);
  fill_random(dy, rng);
  fill_random(dx0, rng);
  StackedLinear<T> stacked;
  stacked.forward(pointers(stacked_layers), x.data(), rows, y.data());
  EXPECT_EQ(stacked.width(), width);
  Tensor<T> dx = dx0;
  stacked.backward(dy.data(), dx.data(), accumulate);

  Tensor<T> dx_separate = dx0;
  if (!accumulate) dx_separate.zero();
  int64_t col = 0;
  for (Linear<T>& layer : separate_layers) {
    const int64_t out = layer.out_features();
    Tensor<T> y_p({rows, out}), dy_p({rows, out});
    layer.forward(x.data(), rows, y_p.data());
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t o = 0; o < out; ++o) {
        const T want = y_p[r * out + o], got = y[r * width + col + o];
        EXPECT_LE(std::abs(double(got) - double(want)), tol * (1 + std::abs(double(want))))
            << "y row " << r << " column " << col + o;
        dy_p[r * out + o] = dy[r * width + col + o];
      }
    layer.backward(dy_p.data(), dx_separate.data(), /*accumulate_dx=*/true);
    col += out;
  }
  for (int64_t i = 0; i < dx.numel(); ++i)
    EXPECT_LE(std::abs(double(dx[i]) - double(dx_separate[i])), tol * (1 + std::abs(double(dx_separate[i]))))
        << "dx " << i;
  for (size_t l = 0; l < stacked_layers.size(); ++l) {
    const ParameterRefs<T> got = stacked_layers[l].parameters(), want = separate_layers[l].parameters();
    ASSERT_EQ(got.size(), want.size());
    for (size_t p = 0; p < got.size(); ++p)
      for (int64_t i = 0; i < got[p]->grad.numel(); ++i)
        EXPECT_LE(std::abs(double(got[p]->grad[i]) - double(want[p]->grad[i])),
                  tol * (1 + std::abs(double(want[p]->grad[i]))))
            << got[p]->name << " grad " << i;
  }
}

TEST(StackedLinear, EqualsTheLayersOneByOneInDouble) {
  for (bool bias : {true, false})
    for (bool accumulate : {true, false}) {
      SCOPED_TRACE(std::string("bias ") + (bias ? "yes" : "no") + ", accumulate " + (accumulate ? "yes" : "no"));
      expect_stacked_equals_separate<double>(bias, accumulate, 1e-13);
    }
}

TEST(StackedLinear, EqualsTheLayersOneByOneInFloatF32AndBf16) {
  for (MatmulPrecision precision : {MatmulPrecision::f32, MatmulPrecision::bf16}) {
    SCOPED_TRACE(matmul_precision_name(precision));
    const ScopedMatmulPrecision scoped(precision);
    // The same operands (bf16: the same rounding); only the order of the float sums differs.
    expect_stacked_equals_separate<float>(true, true, 2e-5);
    expect_stacked_equals_separate<float>(false, false, 2e-5);
  }
}

TEST(StackedLinear, GradientsMatchFiniteDifferences) {
  const testing::ScopedThreads one(1);
  Rng rng(9);
  std::vector<Linear<double>> layers = make_layers<double>(true, rng);
  for (Linear<double>& l : layers)
    for (Parameter<double>* p : l.parameters()) p->grad.zero();
  const int64_t rows = 4, in = 6, width = 15;
  Tensor<double> x({rows, in}), w({rows, width}), y({rows, width}), dx({rows, in});
  fill_random(x, rng);
  fill_random(w, rng);
  StackedLinear<double> stacked;
  auto loss = [&] {
    stacked.forward(pointers(layers), x.data(), rows, y.data());
    return testing::weighted_sum(w.data(), y.data(), y.numel());
  };
  loss();
  stacked.backward(w.data(), dx.data(), /*accumulate_dx=*/false);
  std::vector<testing::FdInput> inputs{{x.data(), x.numel(), "x", dx.data()}};
  for (Linear<double>& l : layers)
    for (Parameter<double>* p : l.parameters())
      inputs.push_back({p->value.data(), p->value.numel(), p->name, p->grad.data()});
  const testing::FdReport report = testing::check_gradients(loss, inputs);
  EXPECT_LT(report.worst_rel_error, 1e-6) << report;
}

TEST(StackedLinear, RejectsLayersOfAnotherInputOrBias) {
  Linear<double> a("a", 6, 4), b("b", 5, 4), c("c", 6, 4, /*bias=*/false);
  Tensor<double> x({2, 6}), y({2, 8});
  StackedLinear<double> stacked;
  for (Linear<double>* other : {&b, &c}) {
    try {
      stacked.forward({&a, other}, x.data(), 2, y.data());
      ADD_FAILURE() << "mismatched layers accepted";
    } catch (const Error& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find(other->weight().name + " ("), std::string::npos) << message;
      EXPECT_NE(message.find("cannot be stacked with a.weight (6 inputs, bias yes)"), std::string::npos)
          << message;
    }
  }
  EXPECT_THROW(stacked.backward(y.data(), x.data(), false), Error);  // no forward has run
}

// The probes read q, k, v back as dense [rows, d]: from the stacked projections, the same values
// as each projection layer gives.
TEST(StackedLinear, AttentionProbeViewsAreTheProjections) {
  LayerOptions options;
  options.d_model = 8;
  options.n_heads = 2;
  Rng rng(13);
  for (bool cross : {false, true}) {
    SCOPED_TRACE(cross ? "cross-attention (k, v stacked)" : "self-attention (q, k, v stacked)");
    MultiHeadAttention<double> mha("attn", cross ? options.cross_attention() : options);
    for (Parameter<double>* p : mha.parameters()) fill_random(p->value, rng);
    const int64_t B = 2, Nq = 3, Nk = cross ? 5 : 3, d = 8;
    Tensor<double> xq({B * Nq, d}), xkv({B * Nk, d}), y({B * Nq, d});
    fill_random(xq, rng);
    fill_random(xkv, rng);
    mha.forward({B, Nq, Nk}, xq.data(), cross ? xkv.data() : xq.data(), y.data());
    Tensor<double> q({B * Nq, d}), k({B * Nk, d}), v({B * Nk, d});
    Linear<double> qp = mha.q_proj(), kp = mha.k_proj(), vp = mha.v_proj();  // copies: no state touched
    qp.forward(xq.data(), B * Nq, q.data());
    kp.forward(cross ? xkv.data() : xq.data(), B * Nk, k.data());
    vp.forward(cross ? xkv.data() : xq.data(), B * Nk, v.data());
    EXPECT_LT(max_abs_diff(mha.kernel_q(), q), 1e-13);
    EXPECT_LT(max_abs_diff(mha.kernel_k(), k), 1e-13);
    EXPECT_LT(max_abs_diff(mha.kernel_v(), v), 1e-13);
    EXPECT_EQ(mha.kernel_q().shape(), (Shape{B * Nq, d}));
    EXPECT_EQ(mha.kernel_k().shape(), (Shape{B * Nk, d}));
  }
}

}  // namespace
}  // namespace scalelab
