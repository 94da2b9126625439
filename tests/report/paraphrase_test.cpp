// report/claim_catalogue: the opening's sentence for a claim judged in parts paraphrases exactly the
// clauses its parts judged (docs/ledger.md, rule 2), not a fixed gist that may promise more.
#include <gtest/gtest.h>

#include "scalelab/report/claim_catalogue.hpp"

namespace scalelab::report {
namespace {

std::string flat(const Inline& text) {
  std::string s;
  for (const Span& span : text) s += span.content;
  return s;
}

TEST(Paraphrase, AClaimInPartsIsParaphrasedByItsJudgedClausesOnly) {
  ClaimRecord c;
  c.id = "A4";
  c.verdict = Verdict::does_not_hold;
  c.parts = {{"saturation", "no scaling pushes softmax into saturation", Verdict::does_not_hold, "", "", ""},
             {"no convergence", "training does not converge.", Verdict::holds, "", "", ""}};
  const std::string s = flat(verdict_sentence("A4", &c));
  EXPECT_EQ(s.rfind("The claim that no scaling pushes softmax into saturation, and training does not converge does not hold", 0), 0u) << s;
  // The catalogue's gist names "gradients vanish", which these parts do not judge.
  EXPECT_EQ(s.find("gradients vanish"), std::string::npos) << s;
}

// Parts' statements are sentences; in the list they read as clauses: "and" is not doubled and a
// sentence-initial capital is lowered, while symbols and acronyms keep theirs.
TEST(Paraphrase, PartStatementsReadAsClausesOfOneSentence) {
  ClaimRecord c;
  c.id = "A6";
  c.verdict = Verdict::does_not_hold;
  c.parts = {{"drop", "Without scaling the first layers' gradient norm drops more than 10x", Verdict::does_not_hold, "", "", ""},
             {"loss", "and the loss does not fall.", Verdict::does_not_hold, "", "", ""}};
  std::string s = flat(verdict_sentence("A6", &c));
  EXPECT_EQ(s.rfind("The claim that without scaling the first layers' gradient norm drops more than 10x, and the loss "
                    "does not fall does not hold", 0), 0u) << s;
  c.parts = {{"var", "Var(q·k) = d_k for iid components", Verdict::holds, "", "", ""},
             {"ln", "Post-LN keeps it", Verdict::holds, "", "", ""},
             {"fp", "FP16 overflows", Verdict::holds, "", "", ""}};
  c.verdict = Verdict::holds;
  s = flat(verdict_sentence("A1", &c));
  EXPECT_EQ(s.rfind("The claim that Var(q·k) = d_k for iid components, Post-LN keeps it, and FP16 overflows holds", 0), 0u) << s;
}

TEST(Paraphrase, AClaimWithoutPartsKeepsTheCatalogueGist) {
  ClaimRecord c;
  c.id = "E1";
  c.verdict = Verdict::holds;
  const std::string s = flat(verdict_sentence("E1", &c));
  EXPECT_NE(s.find("squared norm of an embedding row"), std::string::npos) << s;
}

}  // namespace
}  // namespace scalelab::report
