#include "scalelab/report/opening.hpp"

#include <algorithm>
#include <set>
#include <string>

#include "scalelab/report/answers.hpp"
#include "scalelab/report/claim_catalogue.hpp"
#include "scalelab/report/text.hpp"

namespace scalelab::report {
namespace {

struct Question {
  const char* anchor;
  const char* question;
  const char* lead;  // what the sources say, before the measurements (no measured numbers)
  std::vector<const char*> claims;
  std::vector<const char*> quoted;  // claims whose own measured sentence is added to their item
};

// The two questions of the source documents.
const std::vector<Question>& main_questions() {
  static const std::vector<Question> q = {
      {"q-embedding", "Why is the token embedding multiplied by sqrt(d_model)?",
       "The 2017 paper states the factor without a reason (§3.4). In tensor2tensor and fairseq it "
       "comes paired with an embedding table initialised as N(0, 1/d_model), so the product has "
       "entries of unit scale; PyTorch's nn.Embedding starts from N(0, 1) instead.",
       {"E3", "E4", "E8", "E10"}, {}},
      {"q-attention", "Why are attention logits divided by sqrt(d_k), not d_k or nothing?",
       "The paper gives a suspicion, not an experiment (§3.2.1 and its footnote 4): the dot product of "
       "two vectors with unit-variance components has variance d_k, which may push softmax into regions "
       "with small gradients.",
       {"A1", "A2", "A4", "A6", "A3"}, {}},
  };
  return q;
}

const std::vector<Question>& follow_ups() {
  static const std::vector<Question> q = {
      {"q-d-or-1-over-d", "Why not multiply by d_model, or divide by it?", "", {"E12", "E5"}, {}},
      {"q-learnable", "Would a learnable scale do better?", "", {"E7"}, {"E7"}},
      {"q-rope", "What changes with RoPE and LLaMA-style models?", "", {"E11"}, {"E11"}},
      {"q-tiny-dk", "Does the scale matter for a tiny d_k?", "", {"A8"}, {"A8"}},
      {"q-t5", "Is T5's folded initialisation the same thing?", "", {"A11"}, {"A11"}},
      {"q-fp16", "FP16 overflow: which op really overflows first?", "", {"E6", "A9", "B4"}, {"E6"}},
      {"q-bert", "Does BERT's embedding LayerNorm make the scale unnecessary?", "", {"E9"}, {"E9"}},
      {"q-mup", "What about muP's 1/d_k?", "", {"B3", "A3"}, {"B3"}},
  };
  return q;
}

const ClaimRecord* find(const Ledger& ledger, const std::string& id) {
  auto it = ledger.claims.find(id);
  return it == ledger.claims.end() ? nullptr : &it->second;
}

// One item per claim: "E4 · The claim that ... holds only if ... (key number)." The claim's own
// measured sentence follows where it answers the question directly (which op overflows first).
List answer(const Ledger& ledger, const Question& q) {
  List list;
  for (const char* id : q.claims) {
    const ClaimRecord* claim = find(ledger, id);
    Inline item{claim ? link(id, claim_anchor(id)) : txt(id), txt(" · ")};
    for (Span& s : verdict_sentence(id, claim)) item.push_back(std::move(s));
    const bool quote = std::find_if(q.quoted.begin(), q.quoted.end(),
                                    [&](const char* q_id) { return std::string(q_id) == id; }) != q.quoted.end();
    if (quote && claim && !claim->sentence.empty()) item.push_back(txt(" " + claim->sentence));
    list.items.push_back(std::move(item));
  }
  return list;
}

}  // namespace

// "What was tested": the model, task, steps, optimiser and seeds the training claims used, read
// from a training arm's resolved config (E12's ×sqrt(d) baseline: the base model as configured),
// and the command that reproduces the ledger.
Paragraph what_was_tested(const Ledger& ledger) {
  const Json* config = nullptr;
  int64_t seeds = 0;
  auto take = [&](const ClaimRecord& claim) {
    for (const Arm& a : claim.arms)
      if (a.kind == "train" && !config) config = &a.config, seeds = static_cast<int64_t>(a.seeds.size());
  };
  if (auto it = ledger.claims.find("E12"); it != ledger.claims.end()) take(it->second);
  for (const auto& [id, claim] : ledger.claims) take(claim);
  Inline text{strong("What was tested."), txt(" ")};
  if (config) {
    auto num = [&](const char* section, const char* key) {
      const Json& v = (*config)[section].value(key, Json());
      return v.is_number() ? format_number(v.get<double>()) : std::string("?");
    };
    auto str = [&](const char* section, const char* key) {
      const Json& v = (*config)[section].value(key, Json());
      return v.is_string() ? v.get<std::string>() : std::string("?");
    };
    const std::string task = str("data", "task"), arch = str("model", "arch"), norm = str("model", "norm"),
                      opt = str("train", "optimizer");
    // In words, not config identifiers.
    const std::string arch_words = arch == "encoder_decoder" ? "encoder-decoder" : arch == "decoder_only" ? "decoder-only" : arch;
    const std::string norm_words = norm == "post" ? "Post-LN" : norm == "pre" ? "Pre-LN" : norm;
    const std::string opt_words = opt == "adam" ? "Adam" : opt == "adamw" ? "AdamW" : opt == "sgd" ? "SGD" : opt;
    text.push_back(txt("Training claims train a " + norm_words + " " + arch_words + " (d_model " +
                       num("model", "d_model") + ", " + num("model", "n_heads") + " heads, " + num("model", "encoder_layers") +
                       "+" + num("model", "decoder_layers") + " layers) on " +
                       (task == "cmudict" ? std::string("G2P (CMUdict)") : task == "copy" ? std::string("the synthetic copy task") : task) +
                       " for " + num("train", "steps") + " steps with " + opt_words + ", " +
                       std::to_string(seeds) + " paired seeds, each arm at its own best learning rate (a ×2 grid around " +
                       num("train", "lr") + "); claims change only the knobs they are about. "));
  } else {
    text.push_back(txt("No training claim in this ledger. "));
  }
  text.push_back(txt("Reproduce: "));
  text.push_back(code(std::string("scalelab check") + (ledger.mode == "quick" ? " --quick" : "")));
  text.push_back(txt(ledger.mode == "quick" ? " (quick mode: small models and grids, provisional verdicts)." : "."));
  return Paragraph{text, "note"};
}

std::vector<Block> opening_blocks(const Ledger& ledger, const ClaimFigures& figures) {
  std::vector<Block> out;
  out.push_back(what_was_tested(ledger));
  std::set<std::string> not_run;
  auto add_answer = [&](const Question& q, int level) {
    out.push_back(Heading{level, q.anchor, {txt(q.question)}});
    if (*q.lead) out.push_back(Paragraph{{txt(q.lead)}, ""});
    for (Block& b : answer_blocks(compose_answer(ledger, q.anchor))) out.push_back(std::move(b));
    if (auto f = figures.find(std::string("?") + q.anchor); f != figures.end())
      for (const Figure& fig : f->second) out.push_back(fig);
    out.push_back(Paragraph{{emph("The claims behind this answer:")}, ""});
    out.emplace_back(std::in_place_type<List>, answer(ledger, q));
    for (const char* id : q.claims)
      if (!find(ledger, id)) not_run.insert(id);
  };
  for (const Question& q : main_questions()) add_answer(q, 2);
  out.push_back(Heading{2, "follow-up", {txt("Follow-up questions")}});
  for (const Question& q : follow_ups()) add_answer(q, 3);
  if (!not_run.empty()) {
    std::string ids;
    for (const CatalogueEntry& e : claim_catalogue())
      if (not_run.count(e.id)) {
        if (!ids.empty()) ids += ',';
        ids += e.id;
      }
    out.push_back(Paragraph{{txt("Some claims above were not run in this ledger; run them with "),
                             code("scalelab check --only " + ids), txt(".")},
                            "note"});
  }
  return out;
}

}  // namespace scalelab::report
