// core/config_section: numbers are finite, integers exact, sizes bounded, and errors spell
// non-finite values as nan / inf rather than JSON's null.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "scalelab/core/config_section.hpp"
#include "support/error_message.hpp"

namespace scalelab {
namespace {

using test::error_of;
using ::testing::HasSubstr;

TEST(ConfigSection, NonFiniteNumbersAreRefusedAndPrintedAsNanOrInf) {
  const Json tree = {{"lr", std::numeric_limits<double>::infinity()},
                     {"min_lr", std::numeric_limits<double>::quiet_NaN()},
                     {"neg", -std::numeric_limits<double>::infinity()}};
  ConfigSection s(&tree, "train");
  EXPECT_EQ(error_of([&] { s.get_double("lr", 1.0); }),
            "config: train.lr = inf: must be a finite number");
  EXPECT_EQ(error_of([&] { s.get_double("min_lr", 1.0); }),
            "config: train.min_lr = nan: must be a finite number");
  EXPECT_EQ(error_of([&] { s.get_double("neg", 1.0); }),
            "config: train.neg = -inf: must be a finite number");
  EXPECT_EQ(s.get_double("absent", 2.5), 2.5);
}

TEST(ConfigSection, ValueTextSpellsNonFiniteNumbers) {
  EXPECT_EQ(value_text(Json(std::nan(""))), "nan");
  EXPECT_EQ(value_text(Json(1.5)), "1.5");
  EXPECT_EQ(value_text(Json::array({1, std::numeric_limits<double>::infinity()})), "[1,inf]");
  EXPECT_EQ(value_text(Json("x")), "\"x\"");
}

TEST(ConfigSection, IntegersMustBeExactAndInRange) {
  const Json tree = {{"a", 1e18}, {"b", 1e300}, {"c", 2.5}, {"d", 64.0},
                     {"e", Json(uint64_t(1) << 63)}, {"f", std::nan("")}};
  ConfigSection s(&tree, "model");
  EXPECT_THAT(error_of([&] { s.get_int("a", 0); }), HasSubstr("model.a = 1e+18: expected an integer within +-2^53"));
  EXPECT_THAT(error_of([&] { s.get_int("b", 0); }), HasSubstr("model.b = 1e+300: expected an integer"));
  EXPECT_THAT(error_of([&] { s.get_int("c", 0); }), HasSubstr("model.c = 2.5: expected an integer"));
  EXPECT_EQ(s.get_int("d", 0), 64);
  EXPECT_THAT(error_of([&] { s.get_int("e", 0); }), HasSubstr("model.e = 9223372036854775808: expected an integer below 2^63"));
  EXPECT_THAT(error_of([&] { s.get_int("f", 0); }), HasSubstr("model.f = nan: expected an integer"));
}

TEST(ConfigSection, IntInRangeNamesTheBounds) {
  const Json tree = {{"n", 5}};
  ConfigSection s(&tree, "data");
  EXPECT_EQ(s.get_int_in("n", 0, 1, 5), 5);
  EXPECT_EQ(error_of([&] { s.get_int_in("n", 0, 1, 4); }), "config: data.n = 5: must be in [1, 4]");
}

}  // namespace
}  // namespace scalelab
