// Rule 4 of docs/ledger.md, one evaluation path: a claim evaluated from fresh results (a diverged
// run among them, its numbers NaN and inf as the trainer leaves them), from the same results read
// back from the run cache, and from results received as text (as from another MPI rank) gives
// byte-identical records.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <iostream>
#include <limits>

#include "scalelab/ledger/cache.hpp"
#include "scalelab/ledger/claim.hpp"
#include "scalelab/ledger/runs.hpp"
#include "support/planned_claim.hpp"

namespace scalelab::ledger {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// A training result as execute_run returns it; `diverge` puts NaN and inf where a diverged run has them.
Json fresh_result(int64_t seed, double lr, bool diverge) {
  Json curve = Json::array(), obs = Json::array();
  for (int s = 10; s <= 150; s += 10) {
    const double loss = 2.0 - 0.005 * s + 0.01 * double(seed) + lr;
    curve.push_back({s, diverge && s > 80 ? kNaN : loss, diverge && s > 80 ? kInf : 3.0 + 0.01 * s});
  }
  for (int s : {1, 150})
    obs.push_back({{"step", s},
                   {"grad_layers", {{"encoder", 0, diverge ? kNaN : 1.5}, {"decoder", 0, 2.0}, {"decoder", 1, 2.5}}},
                   {"attn", {{"encoder", 0, "self_attn", diverge ? kInf : 4.0, 0.8, 0.1, 1.0, 0.99}}}});
  return {{"curve", curve}, {"valid", Json::array()}, {"final_valid_nll", diverge ? kNaN : 1.2 + 0.01 * double(seed) + lr},
          {"final_train_loss", diverge ? kNaN : 1.3}, {"diverged", diverge}, {"diverged_step", diverge ? 90 : -1},
          {"observations", obs}, {"seconds", 0.5}};
}

// Plans a real claim in quick mode, fills every run with `result_of` and evaluates it.
std::string record_of(const std::string& id, const std::function<Json(const Json&)>& through) {
  const Claim* claim = nullptr;
  for (const Claim& c : all_claims())
    if (c.info.id == id) claim = &c;
  EXPECT_NE(claim, nullptr);
  ClaimRun run = testing::planned_and_delivered(*claim, [&](const Arm& arm, const RunSpec& spec) {
    // The "×1" arm's seed 2 diverges at every rate.
    const bool diverge = arm.name == "×1" && spec.seed == 2;
    return through(fresh_result(spec.seed, spec.config["train"]["lr"].get<double>(), diverge));
  });
  return run.to_json(claim->evaluate(run), 0.0).dump(1);
}

TEST(OneEvaluationPath, FreshCachedAndReceivedResultsGiveTheSameRecord) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("scalelab-roundtrip-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const RunCache cache(dir.string());
  int64_t n = 0;
  // As the runner does with a fresh result: the stored form.
  const std::string fresh = record_of("E10", [](const Json& r) { return as_stored(r); });
  // Written to the cache and read back.
  const std::string cached = record_of("E10", [&](const Json& r) {
    const std::string key = "k" + std::to_string(n++);
    cache.store(key, "test", as_stored(r));
    const auto hit = cache.find(key, RunKind::train, &std::cerr);
    EXPECT_TRUE(hit.has_value()) << "the cache refused a stored result";
    return hit ? as_stored(*hit) : Json();
  });
  // Sent as text, as a worker rank sends it.
  const std::string received = record_of("E10", [](const Json& r) { return as_stored(Json::parse(r.dump())); });
  fs::remove_all(dir);
  EXPECT_EQ(fresh, cached);
  EXPECT_EQ(fresh, received);
  // The diverged seed is in the record as a failure, not dropped.
  EXPECT_NE(fresh.find("\"failed\": 1"), std::string::npos);
}

}  // namespace
}  // namespace scalelab::ledger
