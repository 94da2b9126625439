// ledger/verdict: what a criterion concludes about a claim (docs/ledger.md, "verdict").
//
//   holds            the data agree with the claim as stated, on every arm tested
//   holds only if    they agree on some measured arms and contradict it on others: `condition`
//                    names the arms (or swept values) where it held, built from their names
//   does not hold    they contradict it on every arm tested (or a judged part fails)
//   not testable     this engine cannot decide it (`reason` says why, e.g. the seeds disagree)
// A verdict is only ever produced by a criterion function (ledger/criteria.hpp) from measurements,
// through the two rules below, so that no condition is text nobody measured.
//
// From cases to a verdict (a case = one arm or swept value, judged yes / no / undecided):
//   every case yes                          -> holds, naming the range tested
//   some yes, some no                       -> holds only if <the yes cases' conditions>
//   no case yes, some no                    -> does not hold, naming the range tested
//   otherwise (yes or undecided; all undecided) -> not testable here: the seeds disagree
// From parts to a claim (a claim with several clauses judges each as a part):
//   parts judged on the same cases          -> case by case, the claim holds where every part
//        held, fails where any part failed, is undecided elsewhere; then the rule above
//   otherwise: any part does not hold       -> does not hold
//   else any part not testable              -> not testable here
//   else parts that hold only if            -> their conditions joined, each named by its part
//   else                                    -> holds
#pragma once
#include <string>
#include <vector>

#include "scalelab/ledger/stats.hpp"

namespace scalelab::ledger {

enum class VerdictKind { holds, holds_only_if, does_not_hold, not_testable };

struct Part;

struct Verdict {
  VerdictKind kind = VerdictKind::not_testable;
  std::string condition;  // holds_only_if
  std::string reason;     // not_testable
  std::string sentence;   // one sentence built from the numbers
  // The cases behind it (from_cases): where the claim held, failed, and every case tested.
  std::vector<std::string> held_on, failed_on, undecided_on, tested;
  std::vector<Part> parts;  // from_parts: the judged clauses

  static Verdict holds(std::string sentence) { return make(VerdictKind::holds, "", "", std::move(sentence)); }
  static Verdict does_not_hold(std::string sentence) {
    return make(VerdictKind::does_not_hold, "", "", std::move(sentence));
  }
  static Verdict not_testable(std::string reason, std::string sentence) {
    return make(VerdictKind::not_testable, "", std::move(reason), std::move(sentence));
  }

 private:
  static Verdict make(VerdictKind k, std::string condition, std::string reason, std::string sentence) {
    Verdict v;
    v.kind = k, v.condition = std::move(condition), v.reason = std::move(reason), v.sentence = std::move(sentence);
    return v;
  }
};

// One arm or swept value of a claim, judged. `condition` is the arm in words as it would complete
// "holds only if ..." ("d_k = 256", "the model has no positions added before the norm").
struct Case {
  std::string condition;
  Outcome outcome = Outcome::undecided;
  std::string detail;  // the figures: "loss 2.1x the baseline (3 of 3 seeds >= 1.5x)"
};
// `head` opens the sentence ("1/d_k is unusable (final loss >= 1.5x)"); `range` names what the
// cases span ("d_k"), used in "at every d_k tested (16, 64, 256)".
Verdict from_cases(const std::vector<Case>& cases, const std::string& head, const std::string& range);

// One clause of a claim and its verdict (nested parts are not allowed).
struct Part {
  std::string name;       // short: "saturation at init"
  std::string statement;  // the clause it judges, in the claim's words
  Verdict verdict;
  std::vector<std::string> arms;  // the arms it used
};
Verdict from_parts(std::vector<Part> parts);

// "marginal: moving every seed by the seeds' own spread (0.12) changes it" (stats.hpp, decide_by_seeds).
std::string marginal_text(const SeedDecision& d);

// Formats a number for a sentence: 3 significant digits, scientific beyond 1e5 or below 1e-3.
std::string fmt(double x);
// "a, b and c".
std::string join_words(const std::vector<std::string>& items, const std::string& last = " and ");

// "holds", "holds only if", "does not hold", "not testable here".
const char* verdict_name(VerdictKind kind);
// Throws Error for anything else.
VerdictKind parse_verdict(const std::string& name);

}  // namespace scalelab::ledger
