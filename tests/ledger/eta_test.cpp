// ledger/eta: the ETA calibrated per kind of run. On a synthetic check shaped like the full ledger
// (a few hundred cheap probe runs and a few hundred training runs whose seconds per estimated unit
// differ by two orders of magnitude, each run 0.6-1.6x off its estimate), run in the runner's order
// (run_order: largest first within each kind, kinds alternating), the ETA after a quarter of the
// runs is within 1.5x of the true remainder; a single rate over all runs, as before, is not. And
// the runner's order ends a round sooner on 2 jobs than the plan order does.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "scalelab/ledger/eta.hpp"

namespace scalelab::ledger {
namespace {

struct TraceRun {
  RunKind kind;
  double units, seconds;
};

// The runs in plan order (the init-time claims' probes come first, as E1-E6 do) and in the
// runner's order (run_order).
struct Trace {
  std::vector<TraceRun> plan_order, runner_order;
};

Trace synthetic_check() {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> noise(0.6, 1.6), log_units(0.0, 1.0);
  std::vector<TraceRun> probes, trains, order, plan;
  for (int i = 0; i < 480; ++i) {
    const double u = std::pow(10.0, 6.0 + 3.0 * log_units(rng));
    probes.push_back({RunKind::probe, u, u * 3e-9 * noise(rng)});
  }
  for (int i = 0; i < 300; ++i) {
    const double u = std::pow(10.0, 11.0 + log_units(rng));
    trains.push_back({RunKind::train, u, u * 2e-11 * noise(rng)});
  }
  plan.insert(plan.end(), probes.begin(), probes.begin() + 240);
  plan.insert(plan.end(), trains.begin(), trains.end());
  plan.insert(plan.end(), probes.begin() + 240, probes.end());
  std::vector<RunSize> sizes;
  for (const TraceRun& r : plan) sizes.push_back({r.kind, r.units});
  for (size_t i : run_order(sizes)) order.push_back(plan[i]);
  return {plan, order};
}

// The true remainder after the first quarter of `runs`, over 2 jobs, and the estimate of `eta`
// fed with that quarter.
std::pair<double, double> after_a_quarter(const std::vector<TraceRun>& runs, Eta& eta) {
  for (const TraceRun& r : runs) eta.planned(r.kind, r.units, false);
  const size_t quarter = runs.size() / 4;
  for (size_t i = 0; i < quarter; ++i) eta.done(runs[i].kind, runs[i].units, runs[i].seconds);
  double truth = 0;
  for (size_t i = quarter; i < runs.size(); ++i) truth += runs[i].seconds;
  return {truth / 2, eta.remaining_seconds(2)};
}

TEST(Eta, NaNBeforeAnyRunThenPerKindRates) {
  Eta eta;
  eta.planned(RunKind::train, 100, false);
  EXPECT_TRUE(std::isnan(eta.remaining_seconds(1)));
  eta.done(RunKind::train, 50, 5.0);  // 0.1 s per unit
  EXPECT_DOUBLE_EQ(eta.remaining_seconds(1), 5.0);
  EXPECT_DOUBLE_EQ(eta.remaining_seconds(2), 2.5);
  eta.planned(RunKind::probe, 10, false);  // no probe done yet: borrows the training rate
  EXPECT_DOUBLE_EQ(eta.remaining_seconds(1), 6.0);
  eta.done(RunKind::probe, 5, 0.005);  // 0.001 s per unit
  EXPECT_DOUBLE_EQ(eta.remaining_seconds(1), 5.0 + 0.005);
}

TEST(Eta, LaterWorkIsExpectedThenReplacedByPlannedRuns) {
  Eta eta;
  eta.done(RunKind::train, 1, 1.0);
  eta.expect_later(RunKind::train, 10);
  EXPECT_DOUBLE_EQ(eta.remaining_seconds(1), 10.0);
  eta.planned(RunKind::train, 4, true);  // a later round plans 4 of the 10 expected
  EXPECT_DOUBLE_EQ(eta.remaining_seconds(1), 10.0);
  eta.done(RunKind::train, 4, 4.0);
  EXPECT_DOUBLE_EQ(eta.remaining_seconds(1), 6.0);
}

// The first round's runs are planned after the later rounds are expected (check.cpp learns what
// to expect from the first round's arms): they must not cancel that expectation. The full run of
// 2026-12-05 showed 32 min left at a quarter of its first round against 57 min true, because the
// first round's 631 runs had drawn the later rounds' expectation down to nothing.
TEST(Eta, FirstRoundRunsDoNotDrawDownTheLaterRoundsExpectation) {
  Eta eta;
  eta.expect_later(RunKind::train, 10);
  eta.planned(RunKind::train, 20, false);  // the first round, planned after the expectation
  eta.done(RunKind::train, 5, 5.0);        // 1 s per unit
  EXPECT_DOUBLE_EQ(eta.remaining_seconds(1), 15.0 + 10.0);
  eta.planned(RunKind::train, 4, true);  // a later round: 4 of the 10 expected
  EXPECT_DOUBLE_EQ(eta.remaining_seconds(1), 19.0 + 6.0);
}

TEST(Eta, AfterAQuarterOfTheRunsWithinOneAndAHalfOfTheTruth) {
  const Trace t = synthetic_check();
  Eta eta;
  const auto [truth, estimate] = after_a_quarter(t.runner_order, eta);
  EXPECT_GT(estimate, truth / 1.5);
  EXPECT_LT(estimate, truth * 1.5);
  // The old estimate, one rate over all runs in plan order, is off by far more: after a quarter
  // only probes have run, and their rate says nothing about training.
  double done_units = 0, done_seconds = 0, all_units = 0;
  for (size_t i = 0; i < t.plan_order.size(); ++i) {
    all_units += t.plan_order[i].units;
    if (i < t.plan_order.size() / 4) done_units += t.plan_order[i].units, done_seconds += t.plan_order[i].seconds;
  }
  double plan_truth = 0;
  for (size_t i = t.plan_order.size() / 4; i < t.plan_order.size(); ++i) plan_truth += t.plan_order[i].seconds;
  const double one_rate = done_seconds / done_units * (all_units - done_units) / 2;
  EXPECT_TRUE(one_rate > plan_truth / 2 * 1.5 || one_rate < plan_truth / 2 / 1.5)
      << "one rate " << one_rate << " s against the truth " << plan_truth / 2 << " s";
}

TEST(RunOrder, LargestFirstWithinEachKindKindsAlternatingTiesInPlanOrder) {
  const std::vector<RunSize> runs = {{RunKind::probe, 5},  {RunKind::train, 1}, {RunKind::train, 9},
                                     {RunKind::probe, 7},  {RunKind::train, 9}, {RunKind::probe, 1},
                                     {RunKind::train, 4}};
  EXPECT_EQ(run_order(runs), (std::vector<size_t>{2, 3, 4, 0, 6, 5, 1}));
  EXPECT_TRUE(run_order({}).empty());
}

// Two workers each take the next run when free (as the runner's jobs do); the time until both
// are done.
double two_job_makespan(const std::vector<TraceRun>& runs) {
  double free_at[2] = {0, 0};
  for (const TraceRun& r : runs) {
    double& first_free = free_at[0] <= free_at[1] ? free_at[0] : free_at[1];
    first_free += r.seconds;
  }
  return std::max(free_at[0], free_at[1]);
}

TEST(RunOrder, ARoundEndsSoonerThanInPlanOrder) {
  // Plan order with the longest run last: the runner's order starts it first.
  std::vector<TraceRun> plan;
  for (int i = 0; i < 20; ++i) plan.push_back({RunKind::train, 10, 10});
  plan.push_back({RunKind::train, 100, 100});
  std::vector<RunSize> sizes;
  for (const TraceRun& r : plan) sizes.push_back({r.kind, r.units});
  std::vector<TraceRun> ordered;
  for (size_t i : run_order(sizes)) ordered.push_back(plan[i]);
  EXPECT_DOUBLE_EQ(two_job_makespan(plan), 200.0);  // 100 s each, then the long run alone
  EXPECT_DOUBLE_EQ(two_job_makespan(ordered), 150.0);
  // The synthetic full ledger: no later than in plan order.
  const Trace t = synthetic_check();
  EXPECT_LE(two_job_makespan(t.runner_order), two_job_makespan(t.plan_order));
}

// One cost model for the ETA and the dry run: a training run's units grow with its steps and
// batch, an emulated 16-bit run costs 4x its f32 twin, and a probe run is far smaller than a
// training run of the same model.
TEST(RunUnits, ProportionalToStepsAndBatchFourTimesInSixteenBitsProbesSmaller) {
  RunSpec train;
  train.config = {{"model", {{"d_model", 64}, {"d_ff", 256}, {"encoder_layers", 2}, {"decoder_layers", 2}}},
                  {"train", {{"steps", 800}, {"batch_size", 64}, {"precision", "f32"}}}};
  RunSpec longer = train, wider = train, f16 = train, probe = train;
  longer.config["train"]["steps"] = 1600;
  wider.config["train"]["batch_size"] = 128;
  f16.config["train"]["precision"] = "f16";
  probe.kind = RunKind::probe;
  probe.options = {{"batches", 2}, {"batch_size", 64}};
  const double u = run_units(train);
  EXPECT_GT(u, 0);
  EXPECT_DOUBLE_EQ(run_units(longer), 2 * u);
  EXPECT_DOUBLE_EQ(run_units(wider), 2 * u);
  EXPECT_DOUBLE_EQ(run_units(f16), 4 * u);
  EXPECT_LT(run_units(probe), u / 50);
}

}  // namespace
}  // namespace scalelab::ledger
