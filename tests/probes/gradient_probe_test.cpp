// The gradient probe around a known step: norms per tensor, per layer and in total, and the
// update/parameter ratio of an SGD step w -= lr·g (= lr·||g|| / ||w||).
#include <gtest/gtest.h>

#include <cmath>

#include "scalelab/probes/gradient_probe.hpp"
#include "scalelab/core/error.hpp"

namespace scalelab::probes {
namespace {

TEST(ParameterLocation, StackAndLayerFromTheCheckpointName) {
  EXPECT_EQ(parameter_location("encoder.layers.3.self_attn.q.weight"), std::make_pair(std::string("encoder"), int64_t{3}));
  EXPECT_EQ(parameter_location("decoder.layers.12.ffn.fc1.bias"), std::make_pair(std::string("decoder"), int64_t{12}));
  EXPECT_EQ(parameter_location("decoder.embed.weight"), std::make_pair(std::string("decoder"), int64_t{-1}));
  EXPECT_EQ(parameter_location("something"), std::make_pair(std::string("model"), int64_t{-1}));
}

TEST(GradientProbe, NormsAndUpdateRatioOfAnSgdStep) {
  Parameter<float> a("encoder.layers.0.self_attn.q.weight", {2, 2}), b("encoder.layers.0.ffn.fc1.bias", {2}),
      c("decoder.embed.weight", {3});
  a.value.fill(1.0f);  // ||w|| = 2
  a.grad.fill(0.5f);   // ||g|| = 1
  b.grad[0] = 3.0f;    // w = 0: no ratio
  b.grad[1] = 4.0f;    // ||g|| = 5
  c.value.fill(2.0f);
  ParameterRefs<float> params{&a, &b, &c};
  GradientProbe<float> probe;
  probe.before_step(params);
  const float lr = 0.25f;
  for (Parameter<float>* p : params)
    for (int64_t i = 0; i < p->value.numel(); ++i) p->value[i] -= lr * p->grad[i];
  probe.after_step(params);
  const std::vector<ProbeRecord> rs = probe.records(3, 0);
  auto find = [&](const std::string& probe_name, const std::string& site) {
    for (const ProbeRecord& r : rs)
      if (r.probe == probe_name && r.site == site) return r;
    ADD_FAILURE() << probe_name << " " << site;
    return ProbeRecord{};
  };
  const ProbeRecord ra = find("grad", a.name);
  EXPECT_EQ(ra.stack, "encoder");
  EXPECT_EQ(ra.layer, 0);
  EXPECT_EQ(ra.seed, 3);
  EXPECT_DOUBLE_EQ(ra.value("grad_norm"), 1.0);
  EXPECT_DOUBLE_EQ(ra.value("param_norm"), 2.0);
  EXPECT_DOUBLE_EQ(ra.value("update_norm"), 0.25);
  EXPECT_DOUBLE_EQ(ra.value("update_ratio"), 0.125);
  EXPECT_DOUBLE_EQ(ra.value("grad_rms"), 0.5);
  const ProbeRecord rb = find("grad", b.name);
  EXPECT_DOUBLE_EQ(rb.value("grad_norm"), 5.0);
  EXPECT_TRUE(std::isnan(rb.value("update_ratio")));
  const ProbeRecord layer = find("grad_layer", "layer");
  EXPECT_EQ(layer.layer, 0);
  EXPECT_DOUBLE_EQ(layer.value("grad_norm"), std::sqrt(1.0 + 25.0));
  const ProbeRecord all = find("grad_layer", "all");
  EXPECT_EQ(all.stack, "model");
  EXPECT_DOUBLE_EQ(all.value("grad_norm"), std::sqrt(26.0));
  EXPECT_DOUBLE_EQ(all.value("numel"), 9.0);
  EXPECT_EQ(find("grad_layer", "outside_layers").stack, "decoder");
}

TEST(GradientProbe, WithoutAStepTheUpdateIsNullAndMismatchesAreErrors) {
  Parameter<float> a("x", {2});
  a.grad.fill(1.0f);
  GradientProbe<float> probe;
  probe.before_step({&a});
  const std::vector<ProbeRecord> rs = probe.records(1, 0);
  EXPECT_DOUBLE_EQ(rs[0].value("grad_norm"), std::sqrt(2.0));
  EXPECT_TRUE(std::isnan(rs[0].value("update_norm")));
  Parameter<float> b("y", {2});
  EXPECT_THROW(probe.after_step({&b}), Error);
}

}  // namespace
}  // namespace scalelab::probes
