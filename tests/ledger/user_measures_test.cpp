// ledger/user_measures on results written by hand: loss_curve reads the training loss at evenly
// spaced points (a diverged seed is +inf at each), f16_overflow sums a training run's per-op
// counts, coord_check is the largest |log-log slope| of a site's size against width.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "scalelab/ledger/user_measures.hpp"

using namespace scalelab;
using namespace scalelab::ledger;

namespace {

Json trained(const std::vector<std::pair<int, double>>& curve, bool failed = false) {
  Json c = Json::array();
  for (const auto& [step, loss] : curve) c.push_back({step, loss, 1.0});
  return {{"curve", c}, {"diverged", failed}, {"final_valid_nll", failed ? Json(nullptr) : Json(1.0)}};
}

Arm arm_of(std::vector<Json> results, int64_t steps = 100) {
  Arm a;
  a.config = {{"train", {{"steps", steps}}}, {"model", {{"d_model", 16}}}};
  a.seeds = {1, 2};
  a.results = std::move(results);
  return a;
}

}  // namespace

TEST(UserMeasures, LossCurveAtEvenlySpacedPoints) {
  MeasureSpec m;
  m.name = "loss_curve";
  m.points = 4;
  EXPECT_EQ(loss_curve_steps(m, 100), (std::vector<int64_t>{25, 50, 75, 100}));
  const Arm a = arm_of({trained({{10, 4.0}, {25, 3.0}, {50, 2.0}, {70, 1.5}, {100, 1.0}}),
                        trained({{10, 4.0}, {20, 3.5}}, true)});
  const auto points = measure_points(m, a);
  ASSERT_EQ(points.size(), 4u);
  EXPECT_EQ(points[0][0], 3.0);
  EXPECT_EQ(points[1][0], 2.0);
  EXPECT_EQ(points[2][0], 1.5);  // step 70 is the logged step nearest 75
  EXPECT_EQ(points[3][0], 1.0);
  for (const auto& p : points) EXPECT_TRUE(std::isinf(p[1]));  // diverged: the worst value
}

TEST(UserMeasures, F16OverflowSumsTheOpsOfATrainingRun) {
  Json r = trained({{10, 1.0}});
  r["rounding"] = {{"embedding_scale", {{"overflow", 5.0}}}, {"qk_matmul", {{"overflow", 2.0}}}};
  const Arm a = arm_of({r, trained({{10, 1.0}})});
  MeasureSpec m;
  m.name = "f16_overflow";
  const std::vector<double> all = measure_per_seed(m, a);
  EXPECT_EQ(all[0], 7.0);
  EXPECT_TRUE(std::isnan(all[1]));  // no counts: not measured (the run was not in f16)
  m.op = "qk_matmul";
  EXPECT_EQ(measure_per_seed(m, a)[0], 2.0);
  const auto per_op = overflow_per_op(a, false);
  EXPECT_EQ(per_op.at("embedding_scale")[0], 5.0);
  EXPECT_EQ(per_op.count("softmax_exp"), 0u);  // no overflow anywhere: not listed
  // A diverged run: the judged total is the worst value, the per-op counts those until it stopped.
  Json failed = trained({{10, 1.0}}, true);
  failed["rounding"] = {{"qk_matmul", {{"overflow", 3.0}}}};
  const Arm b = arm_of({failed, r});
  m.op = "all";
  EXPECT_TRUE(std::isinf(measure_per_seed(m, b)[0]));
  EXPECT_EQ(overflow_per_op(b, false).at("qk_matmul")[0], 3.0);
}

TEST(UserMeasures, CoordCheckIsTheLargestSlopeOverSitesAndSteps) {
  // Two widths, 16 and 64 (4x): site A keeps its size, site B doubles at step 2 (slope 0.5).
  auto run = [](double a, double b1, double b2) {
    Json r = trained({{2, 1.0}});
    r["observations"] = Json::array({
        {{"step", 1}, {"act", Json::array({{"encoder", 0, "A", a, a}, {"encoder", 0, "B", b1, b1}})}},
        {{"step", 2}, {"act", Json::array({{"encoder", 0, "A", a, a}, {"encoder", 0, "B", b2, b2}})}},
    });
    return r;
  };
  Arm narrow = arm_of({run(1.0, 1.0, 1.0), run(1.0, 1.0, 1.0)});
  Arm wide = arm_of({run(1.0, 1.0, 2.0), run(1.0, 1.0, 1.0)});
  wide.config["model"]["d_model"] = 64;
  MeasureSpec m;
  m.name = "coord_check";
  m.widths = {16, 64};
  m.first_steps = 2;
  const std::vector<double> v = coord_check_per_seed(m, {&narrow, &wide});
  EXPECT_NEAR(v[0], 0.5, 1e-12);
  EXPECT_NEAR(v[1], 0.0, 1e-12);
  m.first_steps = 1;  // step 2 not among the first steps
  EXPECT_NEAR(coord_check_per_seed(m, {&narrow, &wide})[0], 0.0, 1e-12);
  wide.results[1]["diverged"] = true;
  m.first_steps = 2;
  EXPECT_TRUE(std::isinf(coord_check_per_seed(m, {&narrow, &wide})[1]));
}

// The JSON Schema editors check claim files with (docs/claims-file.schema.json) lists exactly the
// measures, the ops and the measure keys the loader accepts.
TEST(UserMeasures, SchemaForEditorsMatchesTheLoader) {
  std::ifstream in(std::string(SCALELAB_TEST_SOURCE_DIR) + "/docs/claims-file.schema.json");
  ASSERT_TRUE(in) << "docs/claims-file.schema.json";
  const Json schema = Json::parse(in);
  std::vector<std::string> names;
  for (const Json& n : schema["$defs"]["measure_name"]["enum"]) names.push_back(n.get<std::string>());
  EXPECT_EQ(names, measure_names());
  const Json& props = schema["properties"]["claim"]["items"]["properties"]["measure"]["oneOf"][1]["properties"];
  for (const std::string& name : measure_names())
    for (const std::string& key : measure_keys(name)) EXPECT_TRUE(props.contains(key)) << name << "." << key;
  std::vector<std::string> ops = {"all"};
  for (const std::string& op : precision_op_names()) ops.push_back(op);
  std::vector<std::string> schema_ops;
  for (const Json& op : props["op"]["enum"]) schema_ops.push_back(op.get<std::string>());
  EXPECT_EQ(schema_ops, ops);
}

TEST(UserMeasures, LossCurveAsOneNumberIsTheMeanOfItsPoints) {
  MeasureSpec m;
  m.name = "loss_curve";
  m.points = 2;
  const Arm a = arm_of({trained({{50, 3.0}, {100, 1.0}}), trained({{10, 4.0}}, true)});
  const std::vector<double> v = measure_per_seed(m, a);
  EXPECT_EQ(v[0], 2.0);
  EXPECT_TRUE(std::isinf(v[1]));
}
