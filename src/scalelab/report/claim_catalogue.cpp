#include "scalelab/report/claim_catalogue.hpp"

#include <cctype>
#include <set>

#include "scalelab/report/text.hpp"

namespace scalelab::report {

const std::vector<CatalogueEntry>& claim_catalogue() {
  static const std::vector<CatalogueEntry> entries = {
      {"E1", "the squared norm of an embedding row with N(0, 1) entries is about d_model"},
      {"E2", "sinusoidal positional-encoding entries have variance about one half"},
      {"E3", "unscaled N(0, 1) token embeddings swamp the positional encoding they are added to"},
      {"E4", "after ×sqrt(d_model) the token embeddings and the positional encoding are matched in magnitude"},
      {"E5", "the first layer's attention-logit variance grows like d_model² without the scale and like "
             "d_model⁴ with a ×d_model embedding"},
      {"E6", "in FP16 at a large d_model the ×sqrt(d_model) embedding itself can overflow"},
      {"E7", "a learnable scalar embedding scale is no better than the fixed sqrt(d_model) and can slow "
             "convergence"},
      {"E8", "initialising the embedding with std 1/sqrt(d_model) and not scaling replaces the explicit scale"},
      {"E9", "an embedding LayerNorm (BERT style) absorbs the scale, so none is needed"},
      {"E10", "in a deep encoder-decoder, removing ×sqrt(d_model) makes the loss oscillate and shrinks the "
              "gradient norm"},
      {"E11", "with RoPE and RMS pre-norm (LLaMA style) the embedding scale does not matter and the "
              "initialisation sets the scale instead"},
      {"E12", "multiplying by d_model makes the variance explode and dividing by d_model loses the token "
              "information"},
      {"A1", "Var(q·k) = d_k when q and k have iid unit-variance components"},
      {"A2", "dividing by sqrt(d_k) gives unit-variance logits that stay within a few units of zero"},
      {"A3", "dividing by d_k makes attention nearly uniform and the model unusable"},
      {"A4", "without a scale softmax saturates to near one-hot, gradients vanish and training does not "
             "converge"},
      {"A5", "the softmax derivative p(1−p) is near zero for extreme inputs and moderate for inputs in the "
             "usual range"},
      {"A6", "without a scale the first layers' gradient norms drop by more than an order of magnitude and "
             "the loss does not fall"},
      {"A7", "with a large d_k but the scale left at a smaller d_k's value training oscillates, and the "
             "right scale fixes it"},
      {"A8", "for a tiny d_k the scale makes little difference"},
      {"A9", "in FP16/BF16 even scaled logits can overflow and give inf in softmax"},
      {"A10", "tiled attention with an online softmax (FlashAttention) computes the same result and is "
              "numerically safe"},
      {"A11", "folding 1/sqrt(d_k) into the query initialisation, as T5 does, is equivalent to the explicit "
              "scale"},
      {"A12", "an implementation that divided by d_k trained two to three times slower"},
      {"A13", "attention weights that are all near 1/n show that the scaling is too strong"},
      {"B1", "Pre-LN keeps the per-layer gradient norms even at init and trains without warm-up, "
             "unlike Post-LN"},
      {"B2", "attention logits grow during training at a high learning rate, and QK-norm or a soft-cap "
             "bounds them"},
      {"B3", "with 1/d_k and zero-initialised queries (muP) the best learning rate stays put as the width "
             "grows, unlike with 1/sqrt(d_k)"},
      {"B4", "FP16 training overflows in a few identifiable ops, and dynamic loss scaling copes with them"},
  };
  return entries;
}

std::vector<const ClaimRecord*> claims_in_order(const Ledger& ledger) {
  std::vector<const ClaimRecord*> out;
  std::set<std::string> known;
  for (const CatalogueEntry& e : claim_catalogue()) {
    known.insert(e.id);
    auto it = ledger.claims.find(e.id);
    if (it != ledger.claims.end()) out.push_back(&it->second);
  }
  for (const LedgerEntry& e : ledger.entries)
    if (!known.count(e.id)) out.push_back(&ledger.claims.at(e.id));
  return out;
}

std::string key_number_text(const KeyNumber& k) {
  std::string value = k.text;
  if (value.empty() && k.value) value = format_number(*k.value) + (k.unit.empty() ? "" : " " + k.unit);
  if (value.empty()) return "";
  return k.label.empty() ? value : k.label + ": " + value;
}

std::string claim_anchor(const std::string& id) { return "#claim-" + id; }

namespace {
// A clause to embed mid-sentence: no trailing full stop or space.
std::string clause(std::string s) {
  while (!s.empty() && (s.back() == '.' || s.back() == ' ' || s.back() == '\n')) s.pop_back();
  return s;
}

// A part's statement as a clause of a list: no leading "and " (the list adds its own), and a
// sentence-initial capital lowered when the first word is a plain word ("Folding", not "Var(q·k)",
// "Post-LN" or "FP16").
std::string list_clause(std::string s) {
  s = clause(std::move(s));
  if (s.rfind("and ", 0) == 0 || s.rfind("And ", 0) == 0) s.erase(0, 4);
  const size_t end = s.find(' ');
  const std::string first = s.substr(0, end);
  bool plain = first.size() > 1 && std::isupper(static_cast<unsigned char>(first[0]));
  for (size_t i = 1; plain && i < first.size(); ++i)
    plain = std::islower(static_cast<unsigned char>(first[i])) != 0;
  if (plain) s[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(s[0])));
  return s;
}
}  // namespace

Inline verdict_sentence(const std::string& id, const ClaimRecord* claim) {
  std::string gist = "claim " + id + " holds";
  for (const CatalogueEntry& e : claim_catalogue())
    if (id == e.id) gist = e.gist;
  // A claim judged in parts is paraphrased by the clauses it judged, and by nothing else
  // (docs/ledger.md, rule 2).
  if (claim && !claim->parts.empty()) {
    std::vector<std::string> clauses;
    for (const PartRecord& p : claim->parts)
      if (!p.statement.empty()) clauses.push_back(list_clause(p.statement));
    if (!clauses.empty()) {
      gist.clear();
      for (size_t i = 0; i < clauses.size(); ++i)
        gist += (i == 0 ? "" : i + 1 == clauses.size() ? ", and " : ", ") + clauses[i];
    }
  }
  Inline out{txt("The claim that " + gist + " ")};
  if (!claim) {
    out.push_back(emph("was not run"));
    out.push_back(txt(" in this ledger."));
    return out;
  }
  out.push_back(strong(claim->verdict == Verdict::not_testable ? "is not testable here"
                                                               : verdict_text(claim->verdict)));
  if (claim->verdict == Verdict::holds_only_if && !claim->condition.empty()) {
    out.push_back(txt(" "));
    out.push_back(txt(clause(claim->condition)));
  }
  if (claim->verdict == Verdict::not_testable && !claim->reason.empty()) {
    out.push_back(txt(": "));
    out.push_back(txt(clause(claim->reason)));
  }
  std::string aside = claim->verdict == Verdict::not_testable ? "" : key_number_text(claim->key_number);
  if (claim->provisional) aside += aside.empty() ? "provisional" : "; provisional";
  out.push_back(txt(aside.empty() ? "." : " (" + aside + ")."));
  return out;
}

}  // namespace scalelab::report
