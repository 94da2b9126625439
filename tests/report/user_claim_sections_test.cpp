// report/user_claim_sections: the "Your claims" section from claim records (no check run): only
// claims of a claim file appear, each with its verdict and condition, its figures in the record's
// order, its measurements per arm and sweep value (the criterion's paired quantity last) and its
// arms' configs; without user claims the section is absent.
#include <gtest/gtest.h>

#include "scalelab/report/user_claim_sections.hpp"

namespace scalelab::report {
namespace {

ClaimRecord user_claim() {
  ClaimRecord c;
  c.id = "qk-norm-replaces-scale";
  c.group = "user (qk-norm-large-dk.toml)";
  c.statement = "With QK-norm the scale is not needed.";
  c.experiment = "Arms a; b; swept over model.n_heads.";
  c.criterion = "final valid loss of \"a\" within 5 % of \"b\"'s.";
  c.verdict = Verdict::holds_only_if;
  c.condition = "model.n_heads = 4";
  c.sentence = "held at model.n_heads = 4, failed at model.n_heads = 1.";
  Measurement paired{"final valid loss, |a - b| / |b|", "paired", "4", "", {0.01, 0.02}, 0, 0.015, 0.01, 0.02};
  Measurement a{"final valid loss", "a, model.n_heads = 4", "4", "nats", {0.3, 0.4}, 0, 0.35, 0.3, 0.4};
  c.measurements = {paired, a};
  c.arms = {{"a, model.n_heads = 4", "train", Json{{"model", {{"n_heads", 4}}}}, {1, 2}}};
  return c;
}

TEST(UserClaimSections, OnlyUserClaimsWithVerdictPlotsMeasurementsAndConfigs) {
  const ClaimRecord user = user_claim();
  ClaimRecord builtin;
  builtin.id = "A4";
  builtin.group = "attention (training)";
  EXPECT_TRUE(is_user_claim(user));
  EXPECT_FALSE(is_user_claim(builtin));
  ClaimFigures figures;
  figures[user.id] = {Figure{"qk-norm-replaces-scale-measure", "the measure per arm", "", "plots/x.svg", "not drawn"}};
  Document doc;
  doc.blocks = user_claim_blocks({&builtin, &user}, figures);
  const std::string md = render_markdown(doc);
  EXPECT_NE(md.find("## Your claims"), std::string::npos) << md;
  EXPECT_EQ(md.find("A4"), std::string::npos) << "a built-in claim in the section:\n" << md;
  EXPECT_NE(md.find("**holds only if** model.n_heads = 4"), std::string::npos) << md;  // the summary row
  EXPECT_NE(md.find("**Verdict: holds only if** model.n_heads = 4"), std::string::npos) << md;
  EXPECT_NE(md.find("qk-norm-replaces-scale-measure"), std::string::npos) << md;
  // The arm's row before the paired quantity, though the record lists the paired one first.
  const size_t arm_row = md.find("| a, model.n_heads = 4 |"), paired_row = md.find("paired (criterion)");
  ASSERT_NE(arm_row, std::string::npos) << md;
  ASSERT_NE(paired_row, std::string::npos) << md;
  EXPECT_LT(arm_row, paired_row);
  EXPECT_NE(md.find("\"n_heads\": 4"), std::string::npos) << md;  // the resolved config
  EXPECT_NE(render_html(doc).find("id=\"your-claims\""), std::string::npos);
}

TEST(UserClaimSections, AbsentWithoutUserClaims) {
  ClaimRecord builtin;
  builtin.id = "E1";
  builtin.group = "embedding (init)";
  EXPECT_TRUE(user_claim_blocks({&builtin}, {}).empty());
}

}  // namespace
}  // namespace scalelab::report
