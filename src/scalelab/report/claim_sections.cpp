#include "scalelab/report/claim_sections.hpp"

#include "scalelab/report/claim_catalogue.hpp"
#include "scalelab/report/how_sure.hpp"
#include "scalelab/report/text.hpp"

namespace scalelab::report {
namespace {

// The verdict alone: how sure it is has its own columns beside it.
Inline verdict_cell(const ClaimRecord& c) {
  Inline out{strong(verdict_text(c.verdict))};
  if (c.verdict == Verdict::holds_only_if && !c.condition.empty()) out.push_back(txt(" " + c.condition));
  return out;
}

// "–" where the record holds no such figure (how_sure.hpp says when).
Inline figure_cell(const std::optional<std::string>& text) { return {txt(text ? *text : "–")}; }

// The how-sure columns of the summary: badge, seeds, failed seeds, spread, margin.
std::vector<Inline> how_sure_cells(const ClaimRecord& c) {
  const HowSure sure = how_sure(c);
  const std::optional<double> spread = key_number_spread(c);
  const std::optional<ThresholdMargin> margin = threshold_margin(c);
  return {{how_sure_badge(sure)},
          figure_cell(sure.seeds > 0 ? std::optional(std::to_string(sure.seeds)) : std::nullopt),
          figure_cell(sure.seeds > 0 ? std::optional(std::to_string(sure.failed)) : std::nullopt),
          figure_cell(spread ? std::optional(significant(*spread, 3)) : std::nullopt),
          figure_cell(margin ? std::optional(margin->text) : std::nullopt)};
}

std::string seeds_text(const std::vector<int64_t>& seeds) {
  std::string s;
  for (size_t i = 0; i < seeds.size(); ++i) s += (i ? ", " : "") + std::to_string(seeds[i]);
  return s.empty() ? "–" : s;
}

std::string json_scalar(const Json& v) {
  if (v.is_number()) return format_number(v.get<double>());
  if (v.is_string()) return v.get<std::string>();
  return v.dump(-1, ' ', false, Json::error_handler_t::replace);
}

Block arms_table(const ClaimRecord& c) {
  Table t{{"arm", "kind", "seeds"}, {false, false, false}, {}};
  for (const Arm& a : c.arms) t.rows.push_back({{txt(a.name)}, {txt(a.kind)}, {txt(seeds_text(a.seeds))}});
  return t;
}

Block measurements_table(const ClaimRecord& c) {
  Table t{{"quantity", "arm", "x", "median", "min–max", "seeds", "unit"},
          {false, false, true, true, true, true, false},
          {}};
  for (const Measurement& m : c.measurements) {
    const std::string range = m.min == m.max ? format_number(m.min)
                                             : format_number(m.min) + " – " + format_number(m.max);
    t.rows.push_back({{txt(m.name)},
                      {txt(m.arm)},
                      {txt(m.x.empty() ? "–" : m.x)},
                      {txt(format_number(m.median))},
                      {txt(range)},
                      {txt(std::to_string(m.values.size()) + (m.failed ? " (" + std::to_string(m.failed) + " failed)" : ""))},
                      {txt(m.unit)}});
  }
  return t;
}

// name -> value tables for thresholds and facts (JSON objects of numbers).
Block named_values_table(const Json& values, const char* name_header) {
  Table t{{name_header, "value"}, {false, true}, {}};
  for (auto it = values.begin(); it != values.end(); ++it)
    t.rows.push_back({{code(it.key())}, {txt(json_scalar(it.value()))}});
  return t;
}

}  // namespace

std::vector<Block> summary_blocks(const Ledger& ledger) {
  std::vector<Block> out;
  out.push_back(Heading{2, "summary", {txt("Summary of the verdicts")}});
  Table t{{"claim", "statement", "verdict", "how sure", "seeds", "failed seeds", "paired spread", "margin to threshold",
           "key number"},
          {false, false, false, false, true, true, true, true, false},
          {}};
  t.id = "summary-table";
  for (const ClaimRecord* c : claims_in_order(ledger)) {
    std::vector<Inline> row{{link(c->id, claim_anchor(c->id))}, {txt(c->statement)}, verdict_cell(*c)};
    for (Inline& cell : how_sure_cells(*c)) row.push_back(std::move(cell));
    row.push_back({txt(key_number_text(c->key_number))});
    t.rows.push_back(std::move(row));
  }
  out.push_back(std::move(t));
  out.push_back(Paragraph{
      {emph("How sure: provisional (quick mode), open (not testable here), marginal (moving every seed by "
            "its own spread changes the verdict) or firm. Seeds: per arm; failed seeds count as the worst "
            "value. Paired spread: max − min over seeds of the key number's measurement. Margin: the key "
            "number against the threshold its criterion applies to it. – : the record has no such figure "
            "(docs/ledger.md, \"The report\").")},
      ""});
  std::string not_run;
  for (const CatalogueEntry& e : claim_catalogue())
    if (!ledger.claims.count(e.id)) not_run += (not_run.empty() ? "" : ", ") + std::string(e.id);
  if (!not_run.empty())
    out.push_back(Paragraph{{txt("Not run in this ledger: " + not_run + ".")}, "note"});
  return out;
}

// "holds only if d_k = 256", "not testable here: the seeds disagree ...".
Inline verdict_words(Verdict v, const std::string& condition, const std::string& reason) {
  Inline out{strong(verdict_text(v))};
  if (v == Verdict::holds_only_if && !condition.empty()) out.push_back(txt(" " + condition));
  if (v == Verdict::not_testable && !reason.empty()) out.push_back(txt(": " + reason));
  return out;
}

Block parts_table(const ClaimRecord& c) {
  Table t{{"part", "clause judged", "verdict"}, {false, false, false}, {}};
  for (const PartRecord& p : c.parts) t.rows.push_back({{txt(p.name)}, {txt(p.statement)}, verdict_words(p.verdict, p.condition, p.reason)});
  return t;
}

std::vector<Block> claim_section(const ClaimRecord& c, const std::vector<Figure>& figures) {
  std::vector<Block> out;
  out.push_back(Heading{2, "claim-" + c.id, {txt(c.id + " · " + c.statement)}});
  std::string meta = "Group: " + (c.group.empty() ? std::string("–") : c.group);
  if (!c.mode.empty()) meta += " · mode: " + c.mode;
  if (c.seconds) meta += " · evaluated in " + (*c.seconds < 0.01 ? std::string("under 0.01") : format_number(*c.seconds)) + " s";
  out.push_back(Paragraph{{emph(meta)}, ""});

  // The answer first: the verdict, its sentence, each judged part, the shared-rate reading, the plots.
  out.push_back(Heading{4, "", {txt("Verdict")}});
  const HowSure sure = how_sure(c);
  Paragraph verdict{{how_sure_badge(sure), txt(" ")}, "note"};
  for (Span& s : verdict_words(c.verdict, c.condition, c.reason)) verdict.text.push_back(std::move(s));
  if (!c.sentence.empty()) verdict.text.push_back(txt(" — " + c.sentence));
  out.push_back(std::move(verdict));
  const std::string detail = how_sure_detail(c, sure);
  if (!detail.empty()) out.push_back(Paragraph{{emph("How sure: " + sure.word + " (" + detail + ").")}, ""});
  if (!c.parts.empty()) {
    out.push_back(Heading{4, "", {txt("Parts of the claim, each judged")}});
    out.push_back(parts_table(c));
  }
  if (c.sensitivity) {
    Inline s{txt("At the ledger's shared learning rate (every arm at one rate, before tuning): ")};
    for (Span& n : verdict_words(c.sensitivity->verdict, c.sensitivity->condition, c.sensitivity->reason)) s.push_back(n);
    const std::string k = key_number_text(c.sensitivity->key_number);
    s.push_back(txt(k.empty() ? "." : " (" + k + ")."));
    out.push_back(Paragraph{s, ""});
  }
  // The main plot (the claim's first) with the answer; the others with the evidence.
  if (!figures.empty()) out.push_back(figures.front());

  out.push_back(Heading{4, "", {txt("Experiment")}});
  out.push_back(Paragraph{{txt(c.experiment.empty() ? "(not described)" : c.experiment)}, ""});
  out.push_back(Heading{4, "", {txt("Criterion (fixed before the run)")}});
  out.push_back(Paragraph{{txt(c.criterion.empty() ? "(not stated)" : c.criterion)}, ""});
  if (!c.thresholds.empty()) out.push_back(named_values_table(c.thresholds, "threshold"));

  std::string folded;
  if (figures.size() > 1) folded = std::to_string(figures.size() - 1) + (figures.size() == 2 ? " more plot" : " more plots");
  if (!c.arms.empty()) folded += (folded.empty() ? "" : ", ") + std::string("arms and their configs");
  if (!c.measurements.empty() || !c.facts.empty()) folded += (folded.empty() ? "" : ", ") + std::string("measurements");
  if (folded.empty()) return out;
  out.push_back(FoldBegin{"Evidence: " + folded});
  for (size_t i = 1; i < figures.size(); ++i) out.push_back(figures[i]);

  if (!c.arms.empty()) {
    out.push_back(Heading{4, "", {txt("Arms")}});
    out.push_back(arms_table(c));
    for (const Arm& a : c.arms)
      out.push_back(Details{"Resolved config of arm \"" + a.name + "\"", a.config.dump(2, ' ', false, Json::error_handler_t::replace)});
  }
  if (!c.measurements.empty()) {
    out.push_back(Heading{4, "", {txt("Measurements (median and range over seeds; a failed seed ranks worst)")}});
    out.push_back(measurements_table(c));
  }
  if (!c.facts.empty()) {
    out.push_back(Heading{4, "", {txt("Named numbers")}});
    out.push_back(named_values_table(c.facts, "fact"));
  }
  out.push_back(FoldEnd{});
  return out;
}

}  // namespace scalelab::report
