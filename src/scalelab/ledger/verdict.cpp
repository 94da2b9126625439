#include "scalelab/ledger/verdict.hpp"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>

#include "scalelab/core/error.hpp"

namespace scalelab::ledger {

const char* verdict_name(VerdictKind kind) {
  switch (kind) {
    case VerdictKind::holds: return "holds";
    case VerdictKind::holds_only_if: return "holds only if";
    case VerdictKind::does_not_hold: return "does not hold";
    case VerdictKind::not_testable: return "not testable here";
  }
  return "?";
}

VerdictKind parse_verdict(const std::string& name) {
  for (VerdictKind k : {VerdictKind::holds, VerdictKind::holds_only_if, VerdictKind::does_not_hold,
                        VerdictKind::not_testable})
    if (name == verdict_name(k)) return k;
  throw_error("verdict \"", name, "\" is not one of: holds, holds only if, does not hold, not testable here");
}

std::string fmt(double x) {
  if (!std::isfinite(x)) return std::isnan(x) ? "n/a" : (x > 0 ? "inf" : "-inf");
  std::ostringstream out;
  const double a = std::abs(x);
  if (a != 0 && (a >= 1e5 || a < 1e-3)) out << std::setprecision(2) << std::scientific << x;
  else if (a >= 100) out << std::fixed << std::setprecision(0) << x;
  else out << std::setprecision(3) << x;
  return out.str();
}

std::string join_words(const std::vector<std::string>& items, const std::string& last) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i)
    out += (i == 0 ? "" : i + 1 == items.size() ? last : ", ") + items[i];
  return out;
}

Verdict from_cases(const std::vector<Case>& cases, const std::string& head, const std::string& range) {
  SL_CHECK(!cases.empty(), "from_cases: no cases for \"", head, "\"");
  Verdict v;
  std::vector<std::string> yes_detail, no_detail, undecided_detail;
  for (const Case& c : cases) {
    SL_CHECK(!c.condition.empty(), "from_cases: a case of \"", head, "\" has no condition");
    v.tested.push_back(c.condition);
    const std::string d = c.condition + (c.detail.empty() ? "" : " (" + c.detail + ")");
    switch (c.outcome) {
      case Outcome::yes: v.held_on.push_back(c.condition), yes_detail.push_back(d); break;
      case Outcome::no: v.failed_on.push_back(c.condition), no_detail.push_back(d); break;
      case Outcome::undecided: v.undecided_on.push_back(c.condition), undecided_detail.push_back(d); break;
    }
  }
  std::string s = head + ": ";
  auto add = [&](const char* label, const std::vector<std::string>& d) {
    if (!d.empty()) s += std::string(s.back() == ' ' ? "" : "; ") + label + " " + join_words(d);
  };
  add("holds at", yes_detail);
  add("fails at", no_detail);
  add("seeds disagree at", undecided_detail);
  s += ".";
  const std::string tested = range + " tested: " + join_words(v.tested);
  if (v.failed_on.empty() && v.undecided_on.empty()) {
    v.kind = VerdictKind::holds;
    s += " It holds at every " + tested + ".";
  } else if (!v.held_on.empty() && !v.failed_on.empty()) {
    v.kind = VerdictKind::holds_only_if;
    v.condition = join_words(v.held_on, " or ");
  } else if (v.held_on.empty() && !v.failed_on.empty()) {
    v.kind = VerdictKind::does_not_hold;
    s += " It fails at every " + range + " decided (" + join_words(v.tested) + " tested).";
  } else {
    v.kind = VerdictKind::not_testable;
    v.reason = "the paired seeds disagree at " + join_words(v.undecided_on) +
               ": the effect is within the seeds' noise there";
  }
  v.sentence = s;
  return v;
}

namespace {
bool same_cases(const Verdict& a, const Verdict& b) { return a.tested == b.tested && !a.tested.empty(); }

// "The part that fails: in training." Part names are short labels ("in training", "slower"), so
// they are quoted as names rather than read into the sentence. "" when no part fails.
std::string failing_parts(const std::vector<Part>& parts) {
  std::vector<std::string> names;
  for (const Part& p : parts)
    if (p.verdict.kind == VerdictKind::does_not_hold) names.push_back(p.name);
  if (names.empty()) return "";
  return (names.size() == 1 ? "The part that fails: " : "The parts that fail: ") + join_words(names) + ".";
}
}  // namespace

namespace {
// The verdict of per-case outcomes, as from_cases decides it (`sentence` left to the caller).
Verdict decide(const std::vector<std::string>& tested, const std::vector<Outcome>& outcome,
               const std::string& range) {
  Verdict v;
  v.tested = tested;
  for (size_t i = 0; i < tested.size(); ++i)
    (outcome[i] == Outcome::yes ? v.held_on : outcome[i] == Outcome::no ? v.failed_on : v.undecided_on).push_back(tested[i]);
  if (v.failed_on.empty() && v.undecided_on.empty()) v.kind = VerdictKind::holds;
  else if (!v.held_on.empty() && !v.failed_on.empty()) v.kind = VerdictKind::holds_only_if, v.condition = join_words(v.held_on, " or ");
  else if (v.held_on.empty() && !v.failed_on.empty()) v.kind = VerdictKind::does_not_hold;
  else {
    v.kind = VerdictKind::not_testable;
    v.reason = "the paired seeds disagree at " + join_words(v.undecided_on) + " (" + range + ")";
  }
  return v;
}
}  // namespace

Verdict from_parts(std::vector<Part> parts) {
  SL_CHECK(!parts.empty(), "from_parts: no parts");
  std::string sentence;
  for (const Part& p : parts) {
    SL_CHECK(p.verdict.parts.empty(), "from_parts: part \"", p.name, "\" has parts of its own");
    sentence += (sentence.empty() ? "" : " ") + p.verdict.sentence;
  }
  auto names_of = [&](auto pred) {
    std::vector<std::string> n;
    for (const Part& p : parts)
      if (pred(p)) n.push_back(p.name);
    return join_words(n);
  };
  Verdict v;
  bool shared = true;
  for (const Part& p : parts) shared = shared && same_cases(p.verdict, parts.front().verdict);
  if (shared) {
    // Case by case: the claim holds on a case only where every clause held on it.
    const std::vector<std::string>& tested = parts.front().verdict.tested;
    std::vector<Outcome> outcome;
    for (const std::string& c : tested) {
      bool all_yes = true, any_no = false;
      for (const Part& p : parts) {
        const auto& h = p.verdict.held_on;
        const auto& f = p.verdict.failed_on;
        all_yes = all_yes && std::find(h.begin(), h.end(), c) != h.end();
        any_no = any_no || std::find(f.begin(), f.end(), c) != f.end();
      }
      outcome.push_back(any_no ? Outcome::no : all_yes ? Outcome::yes : Outcome::undecided);
    }
    v = decide(tested, outcome, "case");
    if (v.kind == VerdictKind::does_not_hold) {
      const std::string failing = failing_parts(parts);
      sentence = (failing.empty() ? "No case satisfies " + names_of([](const Part&) { return true; }) + " at once."
                                  : failing) + " " + sentence;
    }
    if (v.kind == VerdictKind::not_testable) {
      std::string why;
      for (const Part& p : parts)
        if (!p.verdict.reason.empty()) why += (why.empty() ? "" : "; ") + p.name + ": " + p.verdict.reason;
      if (!why.empty()) v.reason = why;
    }
  } else {
    auto any = [&](VerdictKind k) {
      return std::any_of(parts.begin(), parts.end(), [&](const Part& p) { return p.verdict.kind == k; });
    };
    if (any(VerdictKind::does_not_hold)) {
      v.kind = VerdictKind::does_not_hold;
      sentence = failing_parts(parts) + " " + sentence;
    } else if (any(VerdictKind::not_testable)) {
      v.kind = VerdictKind::not_testable;
      for (const Part& p : parts)
        if (p.verdict.kind == VerdictKind::not_testable)
          v.reason += (v.reason.empty() ? "" : "; ") + p.name + ": " + p.verdict.reason;
    } else if (any(VerdictKind::holds_only_if)) {
      v.kind = VerdictKind::holds_only_if;
      std::vector<const Part*> conditional;
      for (const Part& p : parts)
        if (p.verdict.kind == VerdictKind::holds_only_if) conditional.push_back(&p);
      if (conditional.size() == 1) {  // the others hold everywhere: its condition is the claim's
        v.condition = conditional.front()->verdict.condition;
        v.held_on = conditional.front()->verdict.held_on;
        v.tested = conditional.front()->verdict.tested;
      } else {
        for (const Part* p : conditional)
          v.condition += (v.condition.empty() ? "" : "; ") + p->verdict.condition + " (" + p->name + ")";
      }
    } else {
      v.kind = VerdictKind::holds;
    }
  }
  v.sentence = sentence;
  v.parts = std::move(parts);
  return v;
}

std::string marginal_text(const SeedDecision& d) {
  return "marginal: moving every seed by the seeds' own spread (" + fmt(d.spread) + ") changes it";
}

}  // namespace scalelab::ledger
