#include "scalelab/report/user_claim_sections.hpp"

#include "scalelab/report/claim_catalogue.hpp"
#include "scalelab/report/text.hpp"

namespace scalelab::report {
namespace {

Inline verdict_inline(const ClaimRecord& c) {
  Inline out{strong(verdict_text(c.verdict))};
  if (c.verdict == Verdict::holds_only_if && !c.condition.empty()) out.push_back(txt(" " + c.condition));
  return out;
}

std::string range_text(const Measurement& m) {
  return m.min == m.max ? format_number(m.min) : format_number(m.min) + " – " + format_number(m.max);
}

// The measured quantity per arm and sweep value (rows of one quantity together, in record order),
// then the paired quantity the criterion judged.
Block measured_table(const ClaimRecord& c) {
  Table t{{"quantity", "arm", "sweep value", "median", "min–max", "seeds"}, {false, false, true, true, true, true}, {}};
  for (bool paired : {false, true})
    for (const Measurement& m : c.measurements) {
      if ((m.arm == "paired") != paired) continue;
      t.rows.push_back({{txt(m.name)},
                        {paired ? emph("paired (criterion)") : txt(m.arm)},
                        {txt(m.x.empty() ? "–" : m.x)},
                        {txt(format_number(m.median) + (m.unit.empty() ? "" : " " + m.unit))},
                        {txt(range_text(m))},
                        {txt(std::to_string(m.values.size()) + (m.failed ? " (" + std::to_string(m.failed) + " failed)" : ""))}});
    }
  t.wrap_words = true;
  return t;
}

}  // namespace

bool is_user_claim(const ClaimRecord& claim) { return claim.group.rfind("user", 0) == 0; }

std::vector<Block> user_claim_blocks(const std::vector<const ClaimRecord*>& claims, const ClaimFigures& figures) {
  std::vector<const ClaimRecord*> user;
  for (const ClaimRecord* c : claims)
    if (is_user_claim(*c)) user.push_back(c);
  if (user.empty()) return {};
  std::vector<Block> out;
  out.push_back(Heading{2, "your-claims", {txt("Your claims")}});
  out.push_back(Paragraph{{txt("Claims from claim files ("), code("scalelab check --claims FILE"),
                           txt("), judged by the rules of the built-in claims: arms paired by seed, the criterion "
                               "fixed in the file before the run, a failed run counted as the worst value, a "
                               "condition only where the claim held on some arm or sweep value and failed on another.")},
                          ""});
  Table summary{{"claim", "file", "verdict", "statement"}, {false, false, false, false}, {}};
  for (const ClaimRecord* c : user) {
    std::string file = c->group.substr(std::string("user").size());
    if (file.size() > 3 && file[0] == ' ' && file[1] == '(') file = file.substr(2, file.size() - 3);
    summary.rows.push_back({{link(c->id, claim_anchor(c->id))}, {code(file)}, verdict_inline(*c), {txt(c->statement)}});
  }
  summary.wrap_words = true;
  out.push_back(summary);
  for (const ClaimRecord* c : user) {
    out.push_back(Heading{3, claim_anchor(c->id).substr(1), {code(c->id), txt(": " + c->statement)}});
    out.push_back(Paragraph{{strong("Experiment."), txt(" " + c->experiment)}, ""});
    out.push_back(Paragraph{{strong("Criterion, fixed before the run."), txt(" " + c->criterion)}, ""});
    Inline verdict{strong(std::string("Verdict: ") + verdict_text(c->verdict))};
    if (c->verdict == Verdict::holds_only_if && !c->condition.empty()) verdict.push_back(txt(" " + c->condition));
    if (!c->sentence.empty()) verdict.push_back(txt(". " + c->sentence));
    out.push_back(Paragraph{verdict, c->verdict == Verdict::not_testable ? "note" : ""});
    const auto it = figures.find(c->id);
    if (it != figures.end())
      for (const Figure& f : it->second) out.push_back(f);
    if (!c->measurements.empty()) out.push_back(measured_table(*c));
    for (const Arm& a : c->arms) {
      std::string body = a.config.is_null() ? std::string("(computed, no run config)") : a.config.dump(2);
      out.push_back(Details{"arm \"" + a.name + "\" (" + a.kind + "): resolved config", body});
    }
  }
  return out;
}

}  // namespace scalelab::report
