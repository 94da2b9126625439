// ledger/verdict: the two rules every verdict goes through (docs/ledger.md, "Rules"): from cases
// (arms or swept values, each judged) to a verdict, and from parts (each clause judged) to a claim.
#include <gtest/gtest.h>

#include "scalelab/core/error.hpp"
#include "scalelab/ledger/verdict.hpp"

namespace scalelab::ledger {
namespace {

Case yes(const std::string& c) { return {c, Outcome::yes, "figures"}; }
Case no(const std::string& c) { return {c, Outcome::no, "figures"}; }
Case split(const std::string& c) { return {c, Outcome::undecided, "figures"}; }

TEST(FromCases, EveryCaseYesHoldsAndNamesTheRange) {
  const Verdict v = from_cases({yes("d_k = 16"), yes("d_k = 64")}, "X", "d_k");
  EXPECT_EQ(v.kind, VerdictKind::holds);
  EXPECT_NE(v.sentence.find("every d_k tested: d_k = 16 and d_k = 64"), std::string::npos) << v.sentence;
  EXPECT_TRUE(v.condition.empty());
}

TEST(FromCases, SomeYesSomeNoHoldsOnlyIfTheYesCasesByTheirOwnNames) {
  const Verdict v = from_cases({no("d_k = 16"), yes("d_k = 256"), no("d_k = 64"), yes("d_k = 512")}, "X", "d_k");
  EXPECT_EQ(v.kind, VerdictKind::holds_only_if);
  EXPECT_EQ(v.condition, "d_k = 256 or d_k = 512");
  EXPECT_EQ(v.held_on, (std::vector<std::string>{"d_k = 256", "d_k = 512"}));
  EXPECT_EQ(v.failed_on, (std::vector<std::string>{"d_k = 16", "d_k = 64"}));
}

TEST(FromCases, NoYesAndSomeNoDoesNotHoldEvenWithUndecidedCases) {
  EXPECT_EQ(from_cases({no("a"), no("b")}, "X", "arm").kind, VerdictKind::does_not_hold);
  const Verdict v = from_cases({no("a"), split("b")}, "X", "arm");
  EXPECT_EQ(v.kind, VerdictKind::does_not_hold);
  EXPECT_NE(v.sentence.find("seeds disagree at b"), std::string::npos) << v.sentence;
}

TEST(FromCases, YesWithOnlyUndecidedOthersIsNotTestableNotAHoldsOnlyIf) {
  // "holds only if" needs a measured case where the claim fails: an undecided one is not that.
  const Verdict v = from_cases({yes("a"), split("b")}, "X", "arm");
  EXPECT_EQ(v.kind, VerdictKind::not_testable);
  EXPECT_NE(v.reason.find("disagree at b"), std::string::npos) << v.reason;
  EXPECT_EQ(from_cases({split("a")}, "X", "arm").kind, VerdictKind::not_testable);
}

TEST(FromCases, RefusesNoCasesAndNamelessCases) {
  EXPECT_THROW(from_cases({}, "X", "arm"), scalelab::Error);
  EXPECT_THROW(from_cases({yes("")}, "X", "arm"), scalelab::Error);
}

Part p(const std::string& name, Verdict v) { return Part{name, "clause " + name, std::move(v), {}}; }

TEST(FromParts, AnyFailingPartFailsTheClaim) {
  const Verdict v = from_parts({p("a", from_cases({yes("x")}, "A", "arm")), p("b", from_cases({no("x")}, "B", "arm"))});
  EXPECT_EQ(v.kind, VerdictKind::does_not_hold);
  EXPECT_EQ(v.parts.size(), 2u);
  EXPECT_EQ(v.sentence.rfind("The part that fails: b.", 0), 0u) << v.sentence;
}

TEST(FromParts, ANotTestablePartLeavesTheClaimNotTestableUnlessAnotherFails) {
  const Verdict undecided = from_cases({split("x")}, "A", "arm");
  EXPECT_EQ(from_parts({p("a", undecided), p("b", from_cases({yes("x")}, "B", "arm"))}).kind, VerdictKind::not_testable);
  EXPECT_EQ(from_parts({p("a", undecided), p("b", from_cases({no("x")}, "B", "arm"))}).kind, VerdictKind::does_not_hold);
}

TEST(FromParts, ConditionalPartsOnTheSameCasesIntersect) {
  const Verdict a = from_cases({yes("16"), yes("64"), no("256")}, "A", "d_k");
  const Verdict b = from_cases({no("16"), yes("64"), yes("256")}, "B", "d_k");
  const Verdict v = from_parts({p("a", a), p("b", b)});
  EXPECT_EQ(v.kind, VerdictKind::holds_only_if);
  EXPECT_EQ(v.condition, "64");
  const Verdict c = from_cases({no("16"), no("64"), yes("256")}, "C", "d_k");
  EXPECT_EQ(from_parts({p("a", a), p("c", c)}).kind, VerdictKind::does_not_hold);
}

TEST(FromParts, OnSharedCasesAPartUndecidedWhereAnotherFailsDoesNotHideWhereBothHeld) {
  // A2's shape: "within [-3, 3]" holds only on synthetic logits; "unit variance" holds there and
  // is undecided elsewhere. Case by case the claim holds on synthetic and fails on the others.
  const Verdict within = from_cases({yes("synthetic"), no("init"), no("trained")}, "W", "where");
  const Verdict unit = from_cases({yes("synthetic"), split("init"), split("trained")}, "U", "where");
  const Verdict v = from_parts({p("within", within), p("unit variance", unit)});
  EXPECT_EQ(v.kind, VerdictKind::holds_only_if);
  EXPECT_EQ(v.condition, "synthetic");
  // Undecided where nothing fails: not testable, with each part's reason.
  const Verdict open = from_parts({p("a", from_cases({yes("x"), split("y")}, "A", "arm")), p("b", from_cases({yes("x"), yes("y")}, "B", "arm"))});
  EXPECT_EQ(open.kind, VerdictKind::not_testable);
  EXPECT_NE(open.reason.find("a: "), std::string::npos) << open.reason;
}

TEST(FromParts, ConditionalPartsOnDifferentCasesNameEachPart) {
  const Verdict a = from_cases({yes("Adam"), no("SGD")}, "A", "optimiser");
  const Verdict b = from_cases({yes("16"), no("64")}, "B", "d_k");
  const Verdict v = from_parts({p("a", a), p("b", b)});
  EXPECT_EQ(v.kind, VerdictKind::holds_only_if);
  EXPECT_EQ(v.condition, "Adam (a); 16 (b)");
}

TEST(FromParts, AllHoldingHolds) {
  EXPECT_EQ(from_parts({p("a", from_cases({yes("x")}, "A", "arm"))}).kind, VerdictKind::holds);
  EXPECT_THROW(from_parts({}), scalelab::Error);
}

}  // namespace
}  // namespace scalelab::ledger
