// The run cache (ledger/cache.hpp) trusts an entry only if it validates against the schema of
// its kind of run (ledger/run_result_schema.hpp): every malformed kind is not returned (so the run
// is done again) with exactly one warning line naming the file and the problem, and never a raw
// library message; numbers that may be non-finite may be null.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <fstream>
#include <sstream>

#include "scalelab/ledger/cache.hpp"
#include "scalelab/ledger/run_result_schema.hpp"

namespace scalelab::ledger {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

const std::string kKey = "0123456789abcdef0123456789abcdef";

// A train result as execute_train writes it, with a diverged run's nulls.
Json train_result() {
  return Json::parse(R"({"diverged": false, "diverged_step": -1, "final_valid_nll": 1.5,
    "final_valid_accuracy": 0.4, "final_train_loss": null,
    "curve": [[1, 2.5, 0.9], [2, null, null]], "valid": [[2, 1.5, 0.4]],
    "observations": [{"step": 1, "loss": null, "grad_layers": [["encoder", 0, 0.5], ["model", -1, null]],
                      "attn": [["encoder", 0, "self_attn", 3.0, 0.9, 0.0, null, 1.0]]}],
    "rounding": {"matmul": {"results": 10, "overflow": 0, "nan": 0, "underflow": 1}},
    "skipped_steps": 0, "seconds": 0.25})");
}

Json probe_result() {
  return Json::parse(R"({"records": [{"schema": 1, "probe": "attn_softmax", "stack": "encoder",
    "layer": 0, "site": "self_attn", "head": -1, "seed": 1, "step": 0,
    "values": {"entropy_norm_mean": 0.93, "max": null},
    "histograms": {"p": {"edges": [0, 0.5, 1], "counts": [3, 4], "below": 0, "above": 0, "nan": 0}},
    "tags": {"preset": "base"}}], "first_step_lr": null})");
}

class RunCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("scalelab-cache-test-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  void write(const std::string& text) { std::ofstream(RunCache(dir_.string()).path(kKey), std::ios::binary) << text; }
  void write_entry(const Json& result) { write(Json{{"key", kKey}, {"label", "x"}, {"result", result}}.dump()); }

  // find() on the entry written: whether it was trusted, and the warning lines.
  bool trusted(RunKind kind, std::string& warnings) {
    std::ostringstream out;
    const bool hit = RunCache(dir_.string()).find(kKey, kind, &out).has_value();
    warnings = out.str();
    return hit;
  }

  // The entry is refused with one line naming the file and containing `problem`.
  void expect_refused(RunKind kind, const std::string& problem) {
    std::string w;
    EXPECT_FALSE(trusted(kind, w));
    EXPECT_EQ(std::count(w.begin(), w.end(), '\n'), 1) << w;
    EXPECT_THAT(w, HasSubstr(kKey + ".json"));
    EXPECT_THAT(w, HasSubstr("running it again"));
    EXPECT_THAT(w, HasSubstr(problem));
    EXPECT_THAT(w, Not(HasSubstr("json.exception")));
  }

  fs::path dir_;
};

TEST_F(RunCacheTest, WellFormedEntriesWithNullsAreTrusted) {
  std::string w;
  write_entry(train_result());
  EXPECT_TRUE(trusted(RunKind::train, w));
  EXPECT_EQ(w, "");
  write_entry(probe_result());
  EXPECT_TRUE(trusted(RunKind::probe, w));
  EXPECT_EQ(w, "");
  // A diverged run: the final numbers are null, an error text is kept.
  Json diverged = train_result();
  diverged["diverged"] = true;
  diverged["diverged_step"] = 7;
  diverged["final_valid_nll"] = nullptr;
  diverged["error"] = "training diverged";
  diverged.erase("final_valid_accuracy");
  write_entry(diverged);
  EXPECT_TRUE(trusted(RunKind::train, w));
}

TEST_F(RunCacheTest, MissingEntryIsSilent) {
  std::string w;
  EXPECT_FALSE(trusted(RunKind::train, w));
  EXPECT_EQ(w, "");
}

TEST_F(RunCacheTest, UnparsableEntriesAreRerun) {
  write("{\"key\": \"" + kKey + "\", \"result\": {");
  expect_refused(RunKind::train, "not valid JSON: parse error");
  write("{\"key\": \"" + kKey + "\", \"result\": {\"seconds\": 1e400}}");
  expect_refused(RunKind::train, "not valid JSON: number overflow parsing '1e400'");
  write("[1, 2]");
  expect_refused(RunKind::train, "a JSON array, expected an object");
  write("");
  expect_refused(RunKind::train, "not valid JSON");
}

TEST_F(RunCacheTest, WrongKeyOrNoResultIsRerun) {
  write(Json{{"key", "other"}, {"result", train_result()}}.dump());
  expect_refused(RunKind::train, "key = '\"other\"'");
  write(Json{{"key", kKey}}.dump());
  expect_refused(RunKind::train, "result: missing");
}

TEST_F(RunCacheTest, EachMalformedTrainFieldIsRerun) {
  struct Case {
    const char* what;
    std::function<void(Json&)> edit;
    const char* problem;
  };
  const std::vector<Case> cases = {
      {"string loss", [](Json& r) { r["curve"][0][1] = "abc"; }, "curve[0][1] = '\"abc\"': expected a number or null"},
      {"boolean loss", [](Json& r) { r["curve"][1][1] = true; }, "curve[1][1] = 'true': expected a number or null"},
      {"short curve row", [](Json& r) { r["curve"][0] = {1, 2.5}; }, "curve[0] = '[1,2.5]': expected an array of 3 values"},
      {"curve not an array", [](Json& r) { r["curve"] = Json::object(); }, "curve = '{}': expected an array"},
      {"fractional step", [](Json& r) { r["valid"][0][0] = 2.5; }, "valid[0][0] = '2.5': expected an integer"},
      {"string diverged", [](Json& r) { r["diverged"] = "false"; }, "diverged = '\"false\"': expected true or false"},
      {"missing final loss", [](Json& r) { r.erase("final_train_loss"); }, "final_train_loss: missing"},
      {"missing seconds", [](Json& r) { r.erase("seconds"); }, "seconds: missing"},
      {"null seconds", [](Json& r) { r["seconds"] = nullptr; }, "seconds = 'null': expected a finite number"},
      {"string nll", [](Json& r) { r["final_valid_nll"] = "1.5"; }, "final_valid_nll = '\"1.5\"': expected a number or null"},
      {"attn row of 6", [](Json& r) { r["observations"][0]["attn"][0].erase(7); r["observations"][0]["attn"][0].erase(6); },
       "observations[0].attn[0] = "},
      {"grad layer name", [](Json& r) { r["observations"][0]["grad_layers"][0][0] = 3; },
       "observations[0].grad_layers[0][0] = '3': expected a string"},
      {"observation step", [](Json& r) { r["observations"][0].erase("step"); }, "observations[0].step: missing"},
      {"rounding count", [](Json& r) { r["rounding"]["matmul"]["nan"] = "0"; }, "rounding.matmul.nan = '\"0\"': expected a finite number"},
      {"result not an object", [](Json& r) { r = Json::array(); }, "result = '[]': expected an object"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    Json r = train_result();
    c.edit(r);
    write_entry(r);
    expect_refused(RunKind::train, c.problem);
  }
}

TEST_F(RunCacheTest, EachMalformedProbeFieldIsRerun) {
  struct Case {
    const char* what;
    std::function<void(Json&)> edit;
    const char* problem;
  };
  const std::vector<Case> cases = {
      {"records missing", [](Json& r) { r.erase("records"); }, "records: missing"},
      {"string value", [](Json& r) { r["records"][0]["values"]["max"] = "1"; },
       "records[0].values.max = '\"1\"': expected a number or null"},
      {"schema 2", [](Json& r) { r["records"][0]["schema"] = 2; }, "records[0].schema = '2': expected 1"},
      {"string layer", [](Json& r) { r["records"][0]["layer"] = "0"; }, "records[0].layer = '\"0\"': expected an integer"},
      {"histogram edges", [](Json& r) { r["records"][0]["histograms"]["p"]["edges"] = {0, 1, 0.5}; },
       "records[0].histograms.p.edges = '[0,1,0.5]': expected increasing numbers"},
      {"histogram counts", [](Json& r) { r["records"][0]["histograms"]["p"]["counts"] = {3}; },
       "records[0].histograms.p: 3 edges for 1 counts"},
      {"tag number", [](Json& r) { r["records"][0]["tags"]["preset"] = 1; }, "records[0].tags.preset = '1': expected a string"},
      {"first_step_lr string", [](Json& r) { r["first_step_lr"] = "0.1"; }, "first_step_lr = '\"0.1\"': expected a number or null"},
      // A train result where a probe result is expected: the cache key says which kind it is.
      {"train result", [](Json& r) { r = train_result(); }, "records: missing"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    Json r = probe_result();
    c.edit(r);
    write_entry(r);
    expect_refused(RunKind::probe, c.problem);
  }
}

TEST_F(RunCacheTest, HostileStringsInTheWarningAreQuotedAndCapped) {
  Json r = train_result();
  r["curve"][0][1] = "\x1b[31m" + std::string(100000, 'x');
  write_entry(r);
  std::string w;
  EXPECT_FALSE(trusted(RunKind::train, w));
  EXPECT_EQ(w.find('\x1b'), std::string::npos);
  EXPECT_LT(w.size(), 600u) << w;
}

TEST_F(RunCacheTest, SpecialFilesAreNotOpened) {
  // A FIFO would block the reader forever; it is reported, not opened.
  const std::string p = RunCache(dir_.string()).path(kKey);
  ASSERT_EQ(::mkfifo(p.c_str(), 0600), 0);
  expect_refused(RunKind::train, "is not a regular file");
  fs::remove(p);
  fs::create_directory(p);
  expect_refused(RunKind::train, "is not a regular file");
}

TEST(RunResultSchema, StoredResultsRoundTrip) {
  // What execute_run returns, through the JSON text the cache stores (NaN written as null).
  Json r = train_result();
  r["curve"][0][2] = std::nan("");
  const Json back = Json::parse(r.dump());
  EXPECT_EQ(run_result_problem(RunKind::train, back), std::nullopt);
  EXPECT_EQ(run_result_problem(RunKind::probe, Json::parse(probe_result().dump())), std::nullopt);
}

}  // namespace
}  // namespace scalelab::ledger
