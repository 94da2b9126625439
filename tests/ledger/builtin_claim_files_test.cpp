// The built-in claims written as claim files (src/scalelab/ledger/claims/*.toml, compiled in):
// A8 plans exactly the runs its C++ experiment planned (so the run cache keeps them), in both
// modes and at any --seeds; it is judged by the format's "equivalent" criterion at d_k 2 only (d_k
// 4 recorded as context); and it keeps its place among the built-in claims.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "scalelab/ledger/builtin_claim_files.hpp"
#include "scalelab/ledger/check.hpp"
#include "scalelab/ledger/claim.hpp"
#include "scalelab/ledger/experiments.hpp"
#include "scalelab/ledger/lr_tuning.hpp"
#include "support/planned_claim.hpp"

namespace scalelab::ledger {
namespace {

const Claim& builtin(const std::string& id) {
  for (const Claim& c : all_claims())
    if (c.info.id == id) return c;
  throw Error("no built-in claim " + id);
}

// A8's runs as its C++ experiment (claims_attention_training.cpp, before it became claims/A8.toml)
// planned them: d_model 32 with 32 / d_k heads, d_ff 128, each scale, d_k 2 then 4, the ledger's
// training config, training seeds and observation of the mode.
ClaimRun a8_as_the_cpp_experiment_planned(const LedgerMode& m) {
  ClaimRun r({"A8", "attention", "", "", ""}, m);
  for (int64_t dk : {2, 4})
    for (const char* scale : {"inv_sqrt_dk", "none"})
      r.add_arm(std::string(scale) + ", d_k " + std::to_string(dk), RunKind::train,
                arm_config(training_tree(m), {"model.d_model=32", "model.n_heads=" + std::to_string(32 / dk),
                                              "model.d_ff=128", "model.attention.scale=\"" + std::string(scale) + "\""}),
                m.seeds(m.train_seeds), observe(m));
  return r;
}

// Every run an arm can ask for: each seed at the arm's own rate and, for a tuned arm, at each rate
// of its starting grid.
std::vector<std::string> keys_of(ClaimRun& run, bool quick) {
  std::vector<std::string> keys;
  for (const Arm& a : run.arms()) {
    EXPECT_TRUE(a.tuned()) << a.name << ": A8's arms run at their own best learning rate";
    for (size_t i = 0; i < a.seeds.size(); ++i) {
      keys.push_back(a.spec(i).key());
      for (double lr : lr_grid(a.config["train"]["lr"].get<double>(), quick)) keys.push_back(a.spec_at({lr, i}).key());
    }
  }
  return keys;
}

TEST(BuiltinClaimFiles, A8PlansTheRunsOfItsCppExperiment) {
  for (const bool quick : {true, false})
    for (const int64_t seeds : {3, 5}) {
      LedgerMode m;
      m.quick = quick;
      m.train_seeds = seeds;
      ClaimRun planned(builtin("A8").info, m);
      builtin("A8").plan(planned);
      // The same arms in the same order, each with the same runs.
      ClaimRun before = a8_as_the_cpp_experiment_planned(m);
      const std::vector<std::string> now = keys_of(planned, quick), then = keys_of(before, quick);
      ASSERT_EQ(planned.arms().size(), 4u) << (quick ? "quick" : "full");
      ASSERT_EQ(now.size(), size_t(4 * seeds * 4)) << "4 arms x seeds x (own rate + 3 grid rates)";
      EXPECT_EQ(now, then) << (quick ? "quick" : "full") << " mode, " << seeds << " seeds";
      // The runs differ between the modes (copy task vs G2P): the file follows the mode.
      EXPECT_EQ(planned.arms()[0].config["data"]["task"], quick ? "copy" : "cmudict");
    }
}

// A training result ending at `final_loss`.
Json trained(double final_loss) {
  return {{"curve", Json::array({{10, final_loss + 0.5, 1.0}, {150, final_loss, 1.0}})},
          {"valid", Json::array()}, {"final_valid_nll", final_loss}, {"final_train_loss", final_loss},
          {"diverged", false}, {"diverged_step", -1}, {"observations", Json::array()}, {"seconds", 0.1}};
}

// Plans A8 in quick mode, runs every run through `loss_at` and evaluates it.
std::pair<Verdict, Json> a8_on(const std::function<double(const Arm& arm, double lr, int64_t seed)>& loss_at) {
  const Claim& a8 = builtin("A8");
  ClaimRun run = testing::planned_and_delivered(a8, [&](const Arm& arm, const RunSpec& spec) {
    return trained(loss_at(arm, spec.config["train"]["lr"].get<double>(), spec.seed));
  });
  const Verdict v = run.checked_for_lr_edges(a8.evaluate(run));
  return {v, run.to_json(v, 0.0)};
}

// A bowl in log2(lr) around the shared rate (an interior best on the quick grid), plus per seed
// and per arm offsets: `none_over_scaled(d_k)` is the no-scale arm's loss over the scaled one's.
double loss(const Arm& arm, double lr, int64_t seed, const std::function<double(int64_t)>& none_over_scaled) {
  const Json& model = arm.config["model"];
  const int64_t dk = model["d_model"].get<int64_t>() / model["n_heads"].get<int64_t>();
  const double base = (1.0 + 0.001 * double(seed)) + 0.05 * std::pow(std::log2(lr / 3e-3), 2);
  return arm.name.rfind("none,", 0) == 0 ? base * none_over_scaled(dk) : base;
}

TEST(BuiltinClaimFiles, A8JudgesDk2AndRecordsDk4AsContext) {
  // Within 3 % at d_k 2 (2 % apart), far apart at d_k 4: holds, d_k 4 is not a case.
  auto [holds, record] = a8_on([](const Arm& a, double lr, int64_t seed) {
    return loss(a, lr, seed, [](int64_t dk) { return dk == 2 ? 1.02 : 1.5; });
  });
  EXPECT_EQ(holds.kind, VerdictKind::holds) << holds.sentence;
  EXPECT_EQ(record["cases"]["tested"], Json::array({"d_k = 2"}));
  // The statement heads the sentence, without its own period before the colon.
  EXPECT_EQ(holds.sentence.rfind("For d_k of 1 or 2, scaling makes little difference: ", 0), 0u) << holds.sentence;
  EXPECT_EQ(record["group"], "attention");
  // d_k 4 is measured and recorded (the paired quantity at x = 4), only not judged.
  bool context_recorded = false;
  for (const Json& mm : record["measurements"])
    context_recorded = context_recorded || (mm["arm"] == "paired" && mm["x"] == 4);
  EXPECT_TRUE(context_recorded) << record["measurements"].dump().substr(0, 1500);
  // The key number: the judged case's paired gap, median over seeds (1.02 / 1 - 1 against the scaled arm's loss).
  ASSERT_TRUE(record["key_number"].is_object());
  EXPECT_NEAR(record["key_number"]["value"].get<double>(), 0.02 / 1.02, 1e-9);
  EXPECT_NE(record["key_number"]["label"].get<std::string>().find("d_k = 2"), std::string::npos);

  // 4 % apart at d_k 2: does not hold, whatever d_k 4 does.
  const Verdict fails = a8_on([](const Arm& a, double lr, int64_t seed) {
                          return loss(a, lr, seed, [](int64_t dk) { return dk == 2 ? 1.04 : 1.0; });
                        }).first;
  EXPECT_EQ(fails.kind, VerdictKind::does_not_hold) << fails.sentence;
}

TEST(BuiltinClaimFiles, A8KeepsItsPlaceAndItsWords) {
  std::vector<std::string> ids;
  for (const Claim& c : all_claims()) ids.push_back(c.info.id);
  ASSERT_GE(ids.size(), 29u);
  EXPECT_EQ(ids[12 + 7], "A8");  // E1..E12, then A1..A7
  EXPECT_EQ(ids[12 + 8], "A9");
  const ClaimInfo& a8 = builtin("A8").info;
  EXPECT_EQ(a8.group, "attention");
  EXPECT_EQ(a8.statement, "For d_k of 1 or 2, scaling makes little difference.");
  // --list shows the claim file as its code, judged by the format's criteria.
  const std::string list = claims_markdown();
  const size_t at = list.find("### A8\n");
  ASSERT_NE(at, std::string::npos);
  const std::string section = list.substr(at, list.find("### A9\n") - at);
  EXPECT_NE(section.find("**Code.** `src/scalelab/ledger/claims/A8.toml` (criterion in `user_claim_compile.cpp`)"),
            std::string::npos)
      << section;
  ASSERT_FALSE(builtin_claim_files().empty());
  EXPECT_EQ(builtin_claim_files().front().name, "A8.toml");
}

}  // namespace
}  // namespace scalelab::ledger
