#include "scalelab/report/answers.hpp"

#include <cmath>
#include <map>
#include <optional>

#include "scalelab/core/error.hpp"
#include "scalelab/report/claim_catalogue.hpp"
#include "scalelab/report/how_sure.hpp"
#include "scalelab/report/plain_words.hpp"
#include "scalelab/report/text.hpp"

namespace scalelab::report {
namespace {

using State = std::optional<Verdict>;  // nullopt: the claim was not run in this ledger

// Reads verdicts, conditions and facts of a ledger's claims by id; absent things read as absent.
class Reader {
 public:
  explicit Reader(const Ledger& ledger) : ledger_(ledger) {}

  const ClaimRecord* claim(const std::string& id) const {
    auto it = ledger_.claims.find(id);
    return it == ledger_.claims.end() ? nullptr : &it->second;
  }
  State verdict(const std::string& id) const {
    const ClaimRecord* c = claim(id);
    return c ? State(c->verdict) : std::nullopt;
  }
  // A judged part's verdict; the claim's own verdict when it was not judged in parts.
  State part(const std::string& id, const std::string& name) const {
    const ClaimRecord* c = claim(id);
    if (!c) return std::nullopt;
    for (const PartRecord& p : c->parts)
      if (p.name == name) return p.verdict;
    return c->verdict;
  }
  std::string part_condition(const std::string& id, const std::string& name) const {
    const ClaimRecord* c = claim(id);
    if (!c) return "";
    for (const PartRecord& p : c->parts)
      if (p.name == name) return p.condition;
    return c->condition;
  }
  std::string condition(const std::string& id) const {
    const ClaimRecord* c = claim(id);
    return c ? c->condition : "";
  }
  std::optional<double> fact(const std::string& id, const std::string& name) const {
    return fact_number(ledger_, id, name);
  }
  // The fact formatted, or "" when absent.
  std::string num(const std::string& id, const std::string& name) const {
    const std::optional<double> v = fact(id, name);
    return v ? format_number(*v) : "";
  }
  // A threshold of the claim's criterion, formatted; "" when absent.
  std::string threshold(const std::string& id, const std::string& name) const {
    const std::optional<double> v = threshold_number(ledger_, id, name);
    return v ? format_number(*v) : "";
  }
  // A fact that is a string (an op's name), in words; "" when absent.
  std::string words(const std::string& id, const std::string& name) const {
    const ClaimRecord* c = claim(id);
    if (!c || !c->facts.is_object() || !c->facts.contains(name) || !c->facts[name].is_string()) return "";
    return plain_words(c->facts[name].get<std::string>());
  }
  std::string key_number(const std::string& id) const {
    const ClaimRecord* c = claim(id);
    if (!c) return "";
    return c->key_number.text.empty() && c->key_number.value ? format_number(*c->key_number.value) : c->key_number.text;
  }

 private:
  const Ledger& ledger_;
};

bool is(const State& s, Verdict v) { return s && *s == v; }
bool held(const State& s) { return is(s, Verdict::holds); }
bool held_only_if(const State& s) { return is(s, Verdict::holds_only_if); }
bool failed(const State& s) { return is(s, Verdict::does_not_hold); }
bool decided(const State& s) { return held(s) || held_only_if(s) || failed(s); }

// "prefix + s + suffix", or "" when s is empty: numbers absent from the record leave no trace.
std::string with(const std::string& s, const std::string& prefix, const std::string& suffix) {
  return s.empty() ? "" : prefix + s + suffix;
}

// " (when C)" for a verdict "holds only if C"; "" otherwise.
std::string when(const State& s, const std::string& condition) {
  return held_only_if(s) && !condition.empty() ? " (only when " + condition + ")" : "";
}

// One sentence for a claim this ledger cannot speak to: `what` is the question as a clause.
std::string open_question(const Reader& r, const std::string& id, const std::string& what) {
  return r.verdict(id) ? "Whether " + what + " is not testable in this run (" + id + ")."
                       : "Whether " + what + " is open: " + id + " was not run in this ledger.";
}

// ---- Why is the token embedding multiplied by sqrt(d_model)? ----------------------------------

Answer embedding(const Reader& r) {
  Answer a;
  const State e4 = r.verdict("E4");
  const std::string matched = r.num("E4", "ratio_normal_inv_d"), normal = r.num("E4", "ratio_normal");
  if (held(e4))
    a.sentences.push_back("To bring the token embeddings to the positional encoding's scale: with every initialisation "
                          "tried, ×√d_model leaves their variances within the matched band" +
                          with(matched, " (ratio ", " for an N(0, 1/d_model) table)") + ".");
  else if (held_only_if(e4)) {
    a.sentences.push_back("To bring the token embeddings to the positional encoding's scale, but only for a table "
                          "initialised small, as the original code does" +
                          with(r.condition("E4"), " (", ")") + with(matched, "; token/position variance ratio ", "") +
                          ".");
    if (!normal.empty())
      a.sentences.push_back("With PyTorch's default N(0, 1) table the same factor makes the tokens " + normal +
                            "× the positional encoding's variance.");
  }
  else if (failed(e4))
    a.sentences.push_back("Not to match the token embeddings to the positional encoding: with no initialisation tried "
                          "does ×√d_model bring the two within the matched band" +
                          with(matched, " (ratio ", " for an N(0, 1/d_model) table)") + ".");
  else
    a.sentences.push_back(open_question(r, "E4", "×√d_model matches the token embeddings to the positional encoding"));

  const State dominates = r.part("E3", "dominates"), drowns = r.part("E3", "drowns position");
  const std::string unscaled = r.num("E3", "ratio_normal_1"), r2 = r.num("E3", "r2_normal_1");
  if (decided(dominates) && decided(drowns)) {
    std::string s = "Without the factor, N(0, 1) token embeddings ";
    s += held(dominates) || held_only_if(dominates) ? "dominate the sum" + when(dominates, r.part_condition("E3", "dominates"))
                                                    : "do not dominate the sum";
    const std::string line = r.threshold("E3", "dominates_ratio");
    const bool dominant = held(dominates) || held_only_if(dominates), drowned = held(drowns) || held_only_if(drowns);
    s += with(unscaled, " (variance ratio ", (dominant ? "" : with(line, "; dominating would be above ", "")) + ")");
    s += held(drowns) || held_only_if(drowns)
             ? " and drown the position" + when(drowns, r.part_condition("E3", "drowns position"))
             : (held(dominates) || held_only_if(dominates) ? " but do not drown the position" : " and do not drown the position");
    s += drowned ? with(r2, " (R² of a linear fit of the position from the layer-0 input: ", ")")
                 : with(r2, ": a linear fit still recovers it from the layer-0 input with R² ", "");
    s += ".";
    a.sentences.push_back(s);
  } else {
    a.sentences.push_back(open_question(r, "E3", "unscaled N(0, 1) embeddings swamp the positional encoding"));
  }

  const State fold0 = r.part("E8", "at initialisation"), fold_train = r.part("E8", "in training");
  if (decided(fold0) || decided(fold_train)) {
    std::string s = "Folding the factor into the initialisation instead (no multiplier, larger entries) ";
    if (held(fold0)) s += "gives the same model at step 0";
    else if (held_only_if(fold0)) s += "gives the same model at step 0 only with " + r.part_condition("E8", "at initialisation");
    else if (failed(fold0)) s += "does not give the same model at step 0";
    else s += "gives a model at step 0 this run could not compare";
    if (held(fold_train) || held_only_if(fold_train)) s += ", and it trains the same" + when(fold_train, r.part_condition("E8", "in training"));
    else if (failed(fold_train)) s += ", and it does not train the same" + with(r.key_number("E8"), " (largest final-loss gap ", " nats)");
    else s += ", and whether it trains the same is not testable here";
    a.sentences.push_back(s + ".");
  } else {
    a.sentences.push_back(open_question(r, "E8", "folding the factor into the initialisation is equivalent"));
  }

  const State grad = r.part("E10", "gradient norm"), oscillation = r.part("E10", "oscillation");
  if (decided(grad) || decided(oscillation)) {
    const std::string with_norm = r.num("E10", "grad_norm_scaled"), without_norm = r.num("E10", "grad_norm_unscaled");
    const std::string norms = with_norm.empty() || without_norm.empty() ? "" : " (" + without_norm + " without, " + with_norm + " with)";
    std::string s = "In training, ";
    if (held(grad) || held_only_if(grad)) s += "the factor lowers the gradient norm" + norms + when(grad, r.part_condition("E10", "gradient norm"));
    else if (failed(grad)) s += "the factor does not bring the large drop in gradient norm the sources describe" + norms;
    else s += "its effect on the gradient norm is not testable here";
    if (held(oscillation) || held_only_if(oscillation)) s += ", and removing it makes the loss oscillate" + when(oscillation, r.part_condition("E10", "oscillation"));
    else if (failed(oscillation)) s += ", and removing it does not make the loss oscillate";
    else s += ", and whether removing it makes the loss oscillate is not testable here";
    a.sentences.push_back(s + ".");
  } else {
    a.sentences.push_back(open_question(r, "E10", "removing the factor destabilises training"));
  }

  if (held_only_if(e4))
    a.in_practice = "keep ×√d_model with an N(0, 1/d_model) embedding table, as tensor2tensor and fairseq do; with "
                    "PyTorch's default N(0, 1) table drop the factor or re-initialise the table" +
                    with(normal, ", since the product is ", "× the positional encoding's variance") + ".";
  else if (held(e4))
    a.in_practice = "keep ×√d_model: it matched tokens and positions with every initialisation tried.";
  else if (failed(e4))
    a.in_practice = "choose the embedding initialisation so that token and position variances are comparable; "
                    "×√d_model alone does not ensure it.";
  else
    a.in_practice = "run scalelab check --only E3,E4 before relying on the factor either way.";
  if (failed(fold_train))
    a.in_practice += " If you fold the factor into the initialisation instead, tune the learning rate again: the two train differently.";
  return a;
}

// ---- Why are attention logits divided by sqrt(d_k)? --------------------------------------------

Answer attention(const Reader& r) {
  Answer a;
  const State closed = r.part("A1", "closed form"), premise = r.part("A1", "premise in the model");
  const std::string q_var = r.num("A1", "model_q_var");
  if (held(closed) && (held(premise) || held_only_if(premise)))
    a.sentences.push_back("Because the premise is right: for independent unit-variance components Var(q·k) = d_k, and the "
                          "model's own queries start near unit variance" + with(q_var, " (Var(q_i) ", ")") + ".");
  else if (held(closed) || held_only_if(closed))
    a.sentences.push_back("For independent unit-variance components Var(q·k) = d_k" + when(closed, r.part_condition("A1", "closed form")) +
                          ", but the model's own queries " + (failed(premise) ? "do not start at unit variance" : "were not compared with it") +
                          with(q_var, " (Var(q_i) ", ")") + ", so the argument's premise is approximate.");
  else if (failed(closed))
    a.sentences.push_back("The variance argument itself failed its check here: Var(q·k) did not come out as d_k for "
                          "independent unit-variance components.");
  else
    a.sentences.push_back(open_question(r, "A1", "Var(q·k) = d_k for unit-variance components"));

  const State sat = r.part("A4", "saturation"), converge = r.part("A4", "no convergence");
  const std::string sat_big = r.num("A4", "saturated_none_dk256"), sat_small = r.num("A4", "saturated_none_dk16");
  const std::string loss_big = r.num("A4", "loss_ratio_dk256"), loss_small = r.num("A4", "loss_ratio_dk16");
  if (decided(sat) || decided(converge)) {
    const std::string shares = sat_big.empty() || sat_small.empty() ? "" : " (" + sat_big + " of rows near one-hot at d_k 256, " + sat_small + " at d_k 16)";
    const std::string losses = loss_big.empty() || loss_small.empty() ? "" : " (final loss " + loss_big + "× the scaled model's at d_k 256, " + loss_small + "× at d_k 16)";
    std::string s = "Without any scale, softmax ";
    if (held(sat)) s += "saturates" + shares;
    else if (held_only_if(sat)) s += "saturates only at " + r.part_condition("A4", "saturation") + shares;
    else if (failed(sat)) s += "does not saturate at the d_k tried" + shares;
    else s += "saturation was not testable here";
    if (held(converge)) s += ", and training does not converge" + losses;
    else if (held_only_if(converge)) s += ", and training ends clearly worse only at " + r.part_condition("A4", "no convergence") + losses;
    else if (failed(converge)) s += ", yet training converges at every d_k tried" + losses;
    else s += ", and whether training converges was not testable here";
    a.sentences.push_back(s + ".");
  } else {
    a.sentences.push_back(open_question(r, "A4", "unscaled logits saturate softmax and stop training"));
  }

  const State drop = r.part("A6", "gradient drop");
  const std::optional<double> grad_ratio = r.fact("A6", "first_layer_grad_ratio_dk256");  // scaled / unscaled
  if (decided(drop)) {
    std::string s;
    if (held(drop) || held_only_if(drop))
      s = "The first layers' gradients of the unscaled model shrink by more than 10×" + when(drop, r.part_condition("A6", "gradient drop"));
    else
      s = "The gradients do not vanish";
    // The direction, where the number agrees with the verdict's (a record that contradicts itself
    // gets no number rather than a sentence that does).
    const bool shrinks = held(drop) || held_only_if(drop);
    if (grad_ratio && *grad_ratio > 0 && !shrinks && *grad_ratio < 1)
      s += ": at d_k 256 the unscaled model's first-layer gradient norm is " + format_number(1 / *grad_ratio) + "× the scaled model's, larger, not smaller";
    else if (grad_ratio && *grad_ratio > 1 && shrinks)
      s += ": at d_k 256 the scaled model's first-layer gradient norm is " + format_number(*grad_ratio) + "× the unscaled model's";
    a.sentences.push_back(s + ".");
  } else {
    a.sentences.push_back(open_question(r, "A6", "the unscaled model's gradients vanish"));
  }

  const State uniform = r.part("A3", "nearly uniform"), unusable = r.part("A3", "unusable");
  const std::optional<double> over = r.fact("A3", "loss_ratio_dk256");  // 1/d_k over 1/sqrt(d_k)
  if (decided(uniform) || decided(unusable)) {
    std::string s = "Dividing by d_k instead ";
    if (held(uniform) || held_only_if(uniform)) s += "makes attention nearly uniform" + when(uniform, r.part_condition("A3", "nearly uniform"));
    else if (failed(uniform)) s += "does not make attention uniform";
    else s += "has an effect on attention this run could not test";
    if (held(unusable) || held_only_if(unusable)) s += ", and the model becomes unusable" + when(unusable, r.part_condition("A3", "unusable"));
    else if (failed(unusable)) s += ", yet the model trains";
    else s += ", and whether the model still trains is not testable here";
    if (over) s += std::string(": at d_k 256 it ends at ") + format_number(*over) + "× the loss of 1/√d_k (" +
                   (*over < 1 ? "lower" : *over > 1 ? "higher" : "equal") + ")";
    a.sentences.push_back(s + ".");
  } else {
    a.sentences.push_back(open_question(r, "A3", "dividing by d_k makes the model unusable"));
  }

  const State within = r.part("A2", "within [-3, 3]");
  const std::string synthetic = r.num("A2", "within_synthetic"), trained = r.num("A2", "within_trained");
  if (decided(within)) {
    std::string s;
    if (held(within)) s = "Scaled logits stay within ±3 in every case tried";
    else if (held_only_if(within)) s = "Scaled logits stay within ±3 only with " + r.part_condition("A2", "within [-3, 3]");
    else s = "Scaled logits do not stay within ±3";
    if (!synthetic.empty()) s += " (share within: " + synthetic + " for synthetic q and k" + with(trained, ", ", " after training") + ")";
    else s += with(trained, " (share within after training: ", ")");
    a.sentences.push_back(s + ".");
  } else {
    a.sentences.push_back(open_question(r, "A2", "scaled logits stay within ±3"));
  }

  const std::string at = r.part_condition("A4", "no convergence");
  if (held_only_if(converge))
    a.in_practice = "divide the logits by √d_k; it matters most at large d_k (here " + at + ")" +
                    with(loss_small, ", while at d_k 16 an unscaled model ended only at ", "× the scaled loss") + ".";
  else if (held(converge))
    a.in_practice = "always scale the logits: without a scale training did not converge at any d_k tried.";
  else if (failed(converge))
    a.in_practice = "the scale changed little at the d_k tried; 1/√d_k costs nothing, so keep it.";
  else
    a.in_practice = "keep 1/√d_k until scalelab check --only A4 says otherwise on your setting.";
  if (failed(unusable) && over && *over <= 1)
    a.in_practice += " 1/d_k (muP's choice) is a safe alternative at large d_k: it ended no worse at d_k 256.";
  return a;
}

// ---- Follow-up questions -----------------------------------------------------------------------

// A follow-up answered by one claim: the answer when it holds, when it holds only under its
// condition, when it does not hold; and the advice for each.
struct FollowUp {
  const char* anchor;
  const char* claim;
  const char* what;  // the question as a clause, for "Whether ... is open"
  const char* yes;
  const char* only;  // followed by the claim's condition
  const char* no;
  const char* practice_yes;
  const char* practice_only;  // followed by the claim's condition
  const char* practice_no;
  std::vector<const char*> also;  // further claims of the question, stated by their verdict
};

const std::vector<FollowUp>& follow_up_texts() {
  static const std::vector<FollowUp> f = {
      {"q-d-or-1-over-d", "E12", "×d_model and ÷d_model do worse than ×√d_model",
       "Because both go wrong: ×d_model inflates the embeddings and ÷d_model shrinks the token information away.",
       "Both go wrong only in part of the settings tried:",
       "The ledger finds neither failure: ×d_model and ÷d_model trained about as well as ×√d_model here.",
       "keep √d_model; d_model and 1/d_model both cost accuracy here.",
       "keep √d_model at least where the data show the others fail:",
       "√d_model is a convention here, not a necessity; any of the three trained.",
       {"E5"}},
      {"q-learnable", "E7", "a learnable scale does better",
       "No: a learnable scale ends no better than the fixed √d_model and converges more slowly.",
       "Not in general; the learnable scale matches the claim only",
       "The claim that it is no better and slower does not hold as a whole here; its parts tell which half fails.",
       "keep the fixed √d_model.",
       "keep the fixed √d_model, unless your setting differs from the one where the claim held:",
       "a learnable scale is worth a try; the fixed √d_model is not clearly better here.",
       {}},
      {"q-rope", "E11", "the embedding scale matters with RoPE and RMS pre-norm",
       "With RoPE and RMS pre-norm the embedding scale does not reach the attention, so it need not be set.",
       "With RoPE and RMS pre-norm the embedding scale does not reach the attention only",
       "With RoPE and RMS pre-norm the embedding scale still matters: the norm does not fully absorb it.",
       "with RoPE and RMS pre-norm, leave the embedding unscaled and let the initialisation set the scale.",
       "with RoPE and RMS pre-norm, the scale can be left out only",
       "with RoPE and RMS pre-norm, still choose the embedding scale with care: it changed training here.",
       {}},
      {"q-tiny-dk", "A8", "the scale matters at a tiny d_k",
       "Hardly: at a tiny d_k the model trains about as well without the scale.",
       "Hardly, but only",
       "Yes: even at a tiny d_k the scale changes the final loss beyond the seeds' noise.",
       "at d_k of a few units the scale is optional.",
       "at a tiny d_k the scale is optional only",
       "keep the scale even at a tiny d_k.",
       {}},
      {"q-t5", "A11", "T5's folded initialisation is equivalent",
       "Yes: folding 1/√d_k into the query initialisation gives the same model and the same training.",
       "Only in part:",
       "Not in training: the folded model starts identical but trains differently, because the optimiser sees "
       "differently scaled query weights.",
       "folding the scale into W_q's initialisation is a drop-in replacement.",
       "folding is a drop-in replacement only",
       "if you fold the scale into W_q's initialisation, tune the learning rate again.",
       {}},
      {"q-fp16", "E6", "the ×√d_model embedding overflows first in FP16",
       "The ×√d_model embedding itself can overflow FP16 at a large d_model.",
       "The ×√d_model embedding itself overflows FP16 only",
       "Not the embedding: the ×√d_model embedding stays below FP16's limit at the d_model tried.",
       "in FP16, guard the embedding output as well as the attention.",
       "in FP16, guard the embedding output",
       "in FP16, guard the attention logits and softmax (subtract the row maximum); the embedding is not the risk.",
       {"A9", "B4"}},
      {"q-bert", "E9", "BERT's embedding LayerNorm makes the scale unnecessary",
       "Yes: the LayerNorm after the embedding absorbs the scale.",
       "Only in part: the LayerNorm absorbs the scale only",
       "No: with BERT's embedding LayerNorm the scale still changes the model.",
       "with an embedding LayerNorm the scale can be dropped.",
       "with an embedding LayerNorm the scale can be dropped only",
       "keep choosing the scale deliberately even with an embedding LayerNorm.",
       {}},
      {"q-mup", "B3", "muP keeps the best learning rate fixed across widths",
       "With muP's 1/d_k and zero-initialised queries the best learning rate stays put as the width grows, "
       "while with 1/√d_k it moves.",
       "With muP the best learning rate stays put only",
       "With muP the best learning rate moves with the width here as well, so the transfer it promises was not seen.",
       "to tune at a small width and transfer the learning rate, use muP's 1/d_k with zero-initialised queries.",
       "learning-rate transfer with muP held only",
       "tune the learning rate at each width; muP's transfer was not seen here.",
       {"A3"}},
  };
  return f;
}

// The gists of claims quoted as related evidence in a follow-up.
const std::vector<std::pair<std::string, std::string>>& also_gists() {
  static const std::vector<std::pair<std::string, std::string>> g = {
      {"E5", "the first layer's logit variance grows like d_model² unscaled and like d_model⁴ with ×d_model"},
      {"A9", "even scaled logits can overflow FP16/BF16 and give inf in softmax"},
      {"B4", "FP16 training needs loss scaling and matches f32 with it"},
      {"A3", "dividing by d_k makes attention nearly uniform and the model unusable"},
  };
  return g;
}

std::string gist_of(const std::string& id) {
  for (const CatalogueEntry& e : claim_catalogue())
    if (id == e.id) return e.gist;
  return "its statement holds";
}

const FollowUp& follow_up(const std::string& anchor) {
  for (const FollowUp& f : follow_up_texts())
    if (anchor == f.anchor) return f;
  throw Error("no composed answer for question \"" + anchor + "\"");
}

// 'Judged in parts, "<clause>" holds, and "<clause>" does not hold.' from the claim's judged
// parts; "" when it was judged as one.
std::string parts_sentence(const ClaimRecord* c) {
  if (!c || c->parts.empty()) return "";
  std::string s = "Judged in parts, ";
  for (size_t i = 0; i < c->parts.size(); ++i) {
    const PartRecord& p = c->parts[i];
    if (i) s += i + 1 == c->parts.size() ? ", and " : ", ";
    s += "“" + p.statement + "” ";
    s += p.verdict == Verdict::not_testable ? std::string("is not testable here") : std::string(verdict_text(p.verdict));
    if (p.verdict == Verdict::holds_only_if && !p.condition.empty()) s += " " + p.condition;
  }
  return s + ".";
}

std::string measured_sentence(const Reader& r, const std::string& id) {
  const ClaimRecord* c = r.claim(id);
  if (!c) return "";
  const std::string k = r.key_number(id);
  if (c->key_number.label.empty() || k.empty()) return "";
  return "Measured: " + plain_words(c->key_number.label) + ", " + k + ".";
}

std::string also_sentence(const Reader& r, const std::string& id, const std::string& gist) {
  const State v = r.verdict(id);
  if (!v) return "The related claim " + id + " was not run in this ledger.";
  std::string s = "The related claim " + id + ", that " + gist + ", " +
                  (*v == Verdict::not_testable ? std::string("is not testable here") : std::string(verdict_text(*v)));
  if (held_only_if(v) && !r.condition(id).empty()) s += " " + plain_words(r.condition(id));
  const std::string k = r.key_number(id);
  return s + with(k, " (", ")") + ".";
}

Answer follow_up_answer(const Reader& r, const FollowUp& f) {
  Answer a;
  const State v = r.verdict(f.claim);
  const std::string cond = r.condition(f.claim);
  if (held(v)) a.sentences.push_back(f.yes);
  else if (held_only_if(v)) a.sentences.push_back(std::string(f.only) + " " + (cond.empty() ? "in some settings" : "when " + cond) + ".");
  else if (failed(v)) a.sentences.push_back(f.no);
  else a.sentences.push_back(open_question(r, f.claim, f.what));
  if (!v) a.sentences.push_back(std::string("Claim ") + f.claim + " tests that " + gist_of(f.claim) + ".");
  if (std::string(f.anchor) == "q-fp16") {
    const std::string first = r.words("E6", "first_overflow_op");
    if (!first.empty() && first != "none")
      a.sentences.push_back("In a forward pass of the model in FP16, the first op to overflow is " + first + ".");
  }
  const bool fp16 = std::string(f.anchor) == "q-fp16";
  if (fp16) {
    const std::string largest = r.num("E6", "embedding_max_abs");
    if (!largest.empty()) a.sentences.push_back("The ×√d_model embedding's largest |value| was " + largest + ", against FP16's 65504.");
  }
  if (v && !fp16) {
    const std::string m = measured_sentence(r, f.claim);
    if (!m.empty()) a.sentences.push_back(m);
    const ClaimRecord* c = r.claim(f.claim);
    if (is(v, Verdict::not_testable) && c && !c->reason.empty()) a.sentences.push_back("The reason: " + plain_words(c->reason) + ".");
    if (c && !is(v, Verdict::not_testable)) {
      const HowSure h = how_sure(*c);
      a.sentences.push_back("How sure: " + h.word + with(how_sure_detail(*c, h), " (", ")") + ".");
    }
    const std::string p = parts_sentence(c);
    if (!p.empty()) a.sentences.push_back(p);
  }
  for (const char* id : f.also) {
    std::string gist;
    for (const auto& [g_id, g] : also_gists())
      if (g_id == id) gist = g;
    a.sentences.push_back(also_sentence(r, id, gist));
  }
  if (std::string(f.anchor) == "q-learnable" && failed(v) && !failed(r.part("E7", "not better")))
    a.in_practice = "keep the fixed √d_model: the learnable scale did not beat it here, though it did not slow convergence either.";
  else if (held(v)) a.in_practice = f.practice_yes;
  else if (held_only_if(v)) a.in_practice = std::string(f.practice_only) + " " + (cond.empty() ? "in the settings where it held" : "when " + cond) + ".";
  else if (failed(v)) a.in_practice = f.practice_no;
  else a.in_practice = std::string("this ledger cannot advise here; run scalelab check --only ") + f.claim + ".";
  return a;
}

}  // namespace

const std::vector<std::string>& answered_questions() {
  static const std::vector<std::string> q = [] {
    std::vector<std::string> out = {"q-embedding", "q-attention"};
    for (const FollowUp& f : follow_up_texts()) out.push_back(f.anchor);
    return out;
  }();
  return q;
}

const std::vector<AnswerInput>& answer_inputs(const std::string& anchor) {
  static const std::map<std::string, std::vector<AnswerInput>> inputs = [] {
    std::map<std::string, std::vector<AnswerInput>> m;
    m["q-embedding"] = {{"E4", {}},
                        {"E3", {"dominates", "drowns position"}},
                        {"E8", {"at initialisation", "in training"}},
                        {"E10", {"gradient norm", "oscillation"}}};
    m["q-attention"] = {{"A1", {"closed form", "premise in the model"}},
                        {"A4", {"saturation", "no convergence"}},
                        {"A6", {"gradient drop"}},
                        {"A3", {"nearly uniform", "unusable"}},
                        {"A2", {"within [-3, 3]"}}};
    for (const FollowUp& f : follow_up_texts()) {
      std::vector<AnswerInput> in = {{f.claim, {}}};
      for (const char* id : f.also) in.push_back({id, {}});
      m[f.anchor] = in;
    }
    return m;
  }();
  auto it = inputs.find(anchor);
  if (it == inputs.end()) throw Error("no composed answer for question \"" + anchor + "\"");
  return it->second;
}

Answer compose_answer(const Ledger& ledger, const std::string& anchor) {
  const Reader r(ledger);
  if (anchor == "q-embedding") return embedding(r);
  if (anchor == "q-attention") return attention(r);
  return follow_up_answer(r, follow_up(anchor));
}

std::vector<Block> answer_blocks(const Answer& answer) {
  std::string text;
  for (const std::string& s : answer.sentences) text += (text.empty() ? "" : " ") + s;
  return {Paragraph{{txt(text)}, ""}, Paragraph{{strong("In practice:"), txt(" " + capitalised(answer.in_practice))}, "answer"}};
}

}  // namespace scalelab::report
