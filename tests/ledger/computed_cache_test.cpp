// The cache of the claims' inline computations (ledger/computed.hpp): a claim evaluated with its
// computations done just now, stored, or read back by a later check gives byte-identical records
// (docs/ledger.md, rule 4); non-finite values survive the round trip; an entry that is not to be
// trusted is computed again with exactly one warning line naming it, and rewritten.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "scalelab/ledger/claim.hpp"
#include "scalelab/ledger/computed.hpp"

namespace scalelab::ledger {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

constexpr double kInf = std::numeric_limits<double>::infinity();

class ComputedCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("scalelab-computed-test-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A13 (computed arms only) planned and evaluated with 2 seeds, through `cache` (null: none).
  static std::string a13_record(ComputedCache* cache) {
    const Claim* claim = nullptr;
    for (const Claim& c : all_claims())
      if (c.info.id == "A13") claim = &c;
    EXPECT_NE(claim, nullptr);
    LedgerMode mode;
    mode.init_seeds = 2;
    ClaimRun run(claim->info, mode);
    claim->plan(run);
    run.set_computed_cache(cache);
    return run.to_json(claim->evaluate(run), 0.0).dump(1);
  }

  // get() of a fixed computation through a fresh cache object on dir_: the values, the warnings,
  // and how many times `compute` ran.
  ComputedValues get(std::string& warnings, int& computed, const std::vector<std::string>& required = {"x"}) {
    std::ostringstream out;
    ComputedCache cache(dir_.string(), &out);
    const ComputedValues v = cache.get("T1", "sums", {{"n", 3}}, required, [&] {
      ++computed;
      ComputedValues c;
      c.set("x", {1.5, kInf, -kInf, std::nan(""), 0.1});
      return c;
    });
    warnings = out.str();
    return v;
  }

  std::string entry_path() const { return ComputedCache(dir_.string()).path(ComputedCache().key("T1", "sums", {{"n", 3}})); }

  fs::path dir_;
};

TEST_F(ComputedCacheTest, FreshStoredAndReadBackGiveTheSameRecord) {
  const std::string fresh = a13_record(nullptr);
  std::ostringstream warnings;
  ComputedCache first(dir_.string(), &warnings);
  const std::string stored = a13_record(&first);
  EXPECT_EQ(first.computed(), 1);
  EXPECT_EQ(first.from_cache(), 0);
  ComputedCache second(dir_.string(), &warnings);
  const std::string cached = a13_record(&second);
  EXPECT_EQ(second.computed(), 0) << "the second evaluation computed again instead of reading the cache";
  EXPECT_EQ(second.from_cache(), 1);
  EXPECT_EQ(warnings.str(), "");
  EXPECT_EQ(fresh, stored);
  EXPECT_EQ(fresh, cached);
  EXPECT_THAT(fresh, HasSubstr("rows above tau(n)"));
}

TEST_F(ComputedCacheTest, NonFiniteValuesSurviveTheCache) {
  std::string w;
  int computed = 0;
  const ComputedValues fresh = get(w, computed);
  const ComputedValues cached = get(w, computed);
  EXPECT_EQ(computed, 1);
  EXPECT_EQ(w, "");
  for (const ComputedValues* v : {&fresh, &cached}) {
    const std::vector<double>& x = v->at("x");
    ASSERT_EQ(x.size(), 5u);
    EXPECT_EQ(x[0], 1.5);
    EXPECT_EQ(x[1], kInf);
    EXPECT_EQ(x[2], -kInf);
    EXPECT_TRUE(std::isnan(x[3]));
    EXPECT_EQ(x[4], 0.1);
  }
}

TEST_F(ComputedCacheTest, AnEntryNotToBeTrustedIsComputedAgainWithOneWarning) {
  std::string w;
  int computed = 0;
  get(w, computed);
  const std::string good = [&] {
    std::ifstream in(entry_path());
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
  }();
  Json wrong_key = Json::parse(good);
  wrong_key["key"] = "other";
  Json bad_value = Json::parse(good);
  bad_value["result"]["x"][0] = "abc";
  Json missing_series = Json::parse(good);
  missing_series["result"].erase("x");
  missing_series["result"]["y"] = {1};
  const std::vector<std::pair<std::string, std::string>> cases = {
      {good.substr(0, good.size() / 2), "not valid JSON"},
      {wrong_key.dump(), "key = "},
      {bad_value.dump(), "series \"x\": \"abc\", expected a number"},
      {missing_series.dump(), "no series \"x\""}};
  for (const auto& [text, problem] : cases) {
    std::ofstream(entry_path(), std::ios::binary | std::ios::trunc) << text;
    computed = 0;
    const ComputedValues v = get(w, computed);
    EXPECT_EQ(computed, 1) << problem;
    EXPECT_EQ(std::count(w.begin(), w.end(), '\n'), 1) << w;
    EXPECT_THAT(w, HasSubstr(entry_path()));
    EXPECT_THAT(w, HasSubstr("computing it again"));
    EXPECT_THAT(w, HasSubstr(problem));
    EXPECT_EQ(v.at("x").at(0), 1.5);
    // Rewritten: the next check reads it without a word.
    computed = 0;
    get(w, computed);
    EXPECT_EQ(computed, 0) << problem;
    EXPECT_EQ(w, "");
  }
}

TEST_F(ComputedCacheTest, TheKeyFollowsEveryInput) {
  const ComputedCache c;
  const std::string k = c.key("A1", "monte carlo", {{"pairs", 100}});
  EXPECT_EQ(k, c.key("A1", "monte carlo", {{"pairs", 100}}));
  EXPECT_NE(k, c.key("A2", "monte carlo", {{"pairs", 100}}));
  EXPECT_NE(k, c.key("A1", "synthetic", {{"pairs", 100}}));
  EXPECT_NE(k, c.key("A1", "monte carlo", {{"pairs", 101}}));
  EXPECT_EQ(running_code_digest().size(), 32u);
}

}  // namespace
}  // namespace scalelab::ledger
