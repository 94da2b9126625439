// The how-sure figures of the summary table (report/how_sure.hpp), each read from the claim record:
// the key number's seed spread and its margin to the threshold its criterion applies, or nothing
// when the record does not determine one.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "scalelab/report/how_sure.hpp"

namespace scalelab::report {
namespace {

Measurement measured(const std::string& x, std::vector<double> values, double median) {
  Measurement m;
  m.x = x;
  m.values = values;
  m.median = median;
  m.min = *std::min_element(values.begin(), values.end());
  m.max = *std::max_element(values.begin(), values.end());
  return m;
}

ClaimRecord with_key(const std::string& id, double key, const std::string& label = "key") {
  ClaimRecord c;
  c.id = id;
  c.group = "attention";
  c.key_number.label = label;
  c.key_number.value = key;
  return c;
}

TEST(HowSure, SpreadIsTheKeyNumbersOwnMeasurementsSeedRange) {
  ClaimRecord c = with_key("A4", 0.91, "saturated share, no scale, d_k 256");
  c.measurements = {measured("64", {0.5, 0.91, 0.7}, 0.7), measured("256", {0.9, 0.91, 0.95}, 0.91)};
  ASSERT_TRUE(key_number_spread(c));
  EXPECT_NEAR(*key_number_spread(c), 0.05, 1e-12);
  // Two measurements with the key number as median: the label's swept value picks one ...
  c.measurements.push_back(measured("16", {0.8, 0.91, 0.99}, 0.91));
  EXPECT_NEAR(*key_number_spread(c), 0.05, 1e-12);
  // ... and without it, differing spreads give none rather than a guess.
  c.key_number.label = "saturated share, no scale";
  EXPECT_FALSE(key_number_spread(c));
  // One seed has no spread; a key number no measurement has as median (a ratio of two) has none.
  ClaimRecord one = with_key("E6", 306);
  one.measurements = {measured("", {306}, 306)};
  EXPECT_FALSE(key_number_spread(one));
  ClaimRecord ratio = with_key("A3", 0.9);
  ratio.measurements = {measured("", {1.0, 1.1, 1.2}, 1.1)};
  EXPECT_FALSE(key_number_spread(ratio));
}

TEST(HowSure, MarginIsTheKeyNumberAgainstItsCriterionsThreshold) {
  ClaimRecord e4 = with_key("E4", 3.82);
  e4.thresholds = {{"matched_factor", 4.0}};
  ASSERT_TRUE(threshold_margin(e4));
  EXPECT_EQ(threshold_margin(e4)->text, "4.5 % below 4");
  e4.key_number.value = 4.0;
  EXPECT_EQ(threshold_margin(e4)->text, "at 4");
  ClaimRecord e12 = with_key("E12", 1.7);
  e12.thresholds = {{"broken_factor", 1.5}};
  EXPECT_EQ(threshold_margin(e12)->text, "13 % above 1.5");
  // Far from it: the ratio.
  ClaimRecord e9 = with_key("E9", 1.16);
  e9.thresholds = {{"absorbed_rel", 0.001}, {"train_equal_rel", 0.02}};
  EXPECT_EQ(threshold_margin(e9)->text, "1200× 0.001");
  ClaimRecord a10 = with_key("A10", 6.51e-7);
  a10.thresholds = {{"same_result_rel", 1e-5}};
  EXPECT_EQ(threshold_margin(a10)->text, "93 % below 1e-5");
  // No threshold the key number is judged against: E1's ratio is judged in standard errors.
  ClaimRecord e1 = with_key("E1", 0.99);
  e1.thresholds = {{"sigmas", 5.0}};
  EXPECT_FALSE(threshold_margin(e1));
  EXPECT_STREQ(key_threshold_name("E1"), "");
  // The threshold missing, zero or not a number; no key number; a claim file's claim of the same id.
  ClaimRecord missing = with_key("E4", 3.82);
  EXPECT_FALSE(threshold_margin(missing));
  missing.thresholds = {{"matched_factor", 0.0}};
  EXPECT_FALSE(threshold_margin(missing));
  missing.thresholds = {{"matched_factor", "four"}};
  EXPECT_FALSE(threshold_margin(missing));
  ClaimRecord no_key = e12;
  no_key.key_number.value.reset();
  EXPECT_FALSE(threshold_margin(no_key));
  ClaimRecord user = e12;
  user.group = "user";
  EXPECT_FALSE(threshold_margin(user));
}

// The pairing of key numbers with thresholds names thresholds the ledger writes: every paired
// claim of the published full run has that threshold and gets a margin.
TEST(HowSure, EveryPairedThresholdIsInThePublishedRecords) {
  const char* source = std::getenv("SCALELAB_SOURCE");
  const std::filesystem::path claims =
      std::filesystem::path(source ? source : SCALELAB_TEST_SOURCE_DIR) / "docs/report/claims";
  if (!std::filesystem::exists(claims)) GTEST_SKIP() << "no published report in " << claims;
  int paired = 0;
  for (const auto& file : std::filesystem::directory_iterator(claims)) {
    const ClaimRecord c = read_claim(file.path().string());
    if (*key_threshold_name(c.id) == '\0') continue;
    ++paired;
    EXPECT_TRUE(c.thresholds.contains(key_threshold_name(c.id))) << c.id << " has no " << key_threshold_name(c.id);
    EXPECT_TRUE(threshold_margin(c)) << c.id;
  }
  EXPECT_EQ(paired, 21);  // every pair of key_threshold_name was checked: the 29 claims less the 8 it leaves out
}

}  // namespace
}  // namespace scalelab::report
