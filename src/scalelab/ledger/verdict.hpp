// ledger/verdict: what a criterion concludes about a claim (docs/ledger.md, "verdict").
//
//   holds            the data agree with the claim as stated
//   holds only if    they agree under a condition the data show (`condition` names it)
//   does not hold    they contradict it
//   not testable     this engine cannot decide it (`reason` says why)
// A verdict is only ever produced by a criterion function (ledger/criteria.hpp) from measurements.
#pragma once
#include <string>

namespace scalelab::ledger {

enum class VerdictKind { holds, holds_only_if, does_not_hold, not_testable };

struct Verdict {
  VerdictKind kind = VerdictKind::not_testable;
  std::string condition;  // holds_only_if
  std::string reason;     // not_testable
  std::string sentence;   // one sentence built from the numbers

  static Verdict holds(std::string sentence) { return {VerdictKind::holds, "", "", std::move(sentence)}; }
  static Verdict holds_only_if(std::string condition, std::string sentence) {
    return {VerdictKind::holds_only_if, std::move(condition), "", std::move(sentence)};
  }
  static Verdict does_not_hold(std::string sentence) {
    return {VerdictKind::does_not_hold, "", "", std::move(sentence)};
  }
  static Verdict not_testable(std::string reason, std::string sentence) {
    return {VerdictKind::not_testable, "", std::move(reason), std::move(sentence)};
  }
};

// Formats a number for a sentence: 3 significant digits, scientific beyond 1e5 or below 1e-3.
std::string fmt(double x);

// "holds", "holds only if", "does not hold", "not testable here".
const char* verdict_name(VerdictKind kind);
// Throws Error for anything else.
VerdictKind parse_verdict(const std::string& name);

}  // namespace scalelab::ledger
