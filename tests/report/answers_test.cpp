// report/answers: every combination of verdicts a question can receive renders a paragraph of
// three to six grammatical sentences and an "In practice:" line, with no code identifier, no
// unfilled template, no number left as n/a, and wording that follows the verdicts it was given.
#include <gtest/gtest.h>

#include <cctype>
#include <functional>
#include <set>

#include "scalelab/core/error.hpp"
#include "scalelab/report/answers.hpp"
#include "scalelab/report/plain_words.hpp"

namespace scalelab::report {
namespace {

using State = std::optional<Verdict>;  // nullopt: not run
const std::vector<State> kClaimStates = {std::nullopt, Verdict::holds, Verdict::holds_only_if, Verdict::does_not_hold,
                                         Verdict::not_testable};
const std::vector<Verdict> kPartStates = {Verdict::holds, Verdict::holds_only_if, Verdict::does_not_hold,
                                          Verdict::not_testable};

// The facts the answers read, at values that flip each direction the text states.
Json facts_for(const std::string& id, bool low) {
  const double r = low ? 0.2 : 3.0;
  if (id == "E4") return {{"ratio_normal_inv_d", 3.8}, {"ratio_normal", 977.3}};
  if (id == "E3") return {{"ratio_normal_1", 3.8}, {"r2_normal_1", 0.99}};
  if (id == "E10") return {{"grad_norm_scaled", 1.7}, {"grad_norm_unscaled", 2.1}};
  if (id == "A1") return {{"model_q_var", 1.46}};
  if (id == "A4")
    return {{"saturated_none_dk256", 0.65}, {"saturated_none_dk16", 0.12}, {"loss_ratio_dk256", 2.9}, {"loss_ratio_dk16", 1.2}};
  if (id == "A6") return {{"first_layer_grad_ratio_dk256", r}};
  if (id == "A3") return {{"loss_ratio_dk256", low ? 0.9 : 1.2}};
  if (id == "A2") return {{"within_synthetic", 0.997}, {"within_trained", 0.989}};
  if (id == "E6") return {{"embedding_max_abs", 306.25}, {"first_overflow_op", "encoder layer 0 self_attn: qk_matmul"}};
  return Json::object();
}

ClaimRecord make_claim(const std::string& id, Verdict v, const std::vector<std::string>& part_names,
                       const std::vector<Verdict>& part_verdicts, bool with_facts, bool low) {
  ClaimRecord c;
  c.id = id;
  c.statement = "statement of " + id;
  c.verdict = v;
  if (v == Verdict::holds_only_if) c.condition = "d_k = 256";
  if (v == Verdict::not_testable) c.reason = "the paired seeds disagree at d_k = 2";
  c.key_number = {"final loss ratio, sqrt_d over inv_sqrt_dk", 1.7, "", "1.7"};
  if (with_facts) c.facts = facts_for(id, low);
  if (id == "E3") c.thresholds = {{"dominates_ratio", 4.0}};
  for (size_t i = 0; i < part_names.size(); ++i) {
    PartRecord p;
    p.name = part_names[i];
    p.statement = "the clause judged as " + part_names[i];
    p.verdict = part_verdicts[i];
    if (p.verdict == Verdict::holds_only_if) p.condition = "d_k = 64 or d_k = 256";
    c.parts.push_back(p);
  }
  return c;
}

// Parts consistent with a claim's verdict: all hold, all hold under a condition, the first fails,
// none testable.
std::vector<Verdict> parts_for(Verdict v, size_t n) {
  std::vector<Verdict> out(n, v == Verdict::does_not_hold ? Verdict::holds : v);
  if (v == Verdict::does_not_hold && n) out[0] = Verdict::does_not_hold;
  return out;
}

// The words of a text: runs of letters, digits and '_', each with whether a single space is all
// that separates it from the word before (hand-written: the test renders ~15,000 paragraphs, also
// under the sanitizers, where std::regex is slow).
struct Word {
  std::string text;
  bool after_one_space = false;
};
std::vector<Word> words_of(const std::string& text) {
  std::vector<Word> out;
  std::string w, gap;
  auto flush = [&] {
    if (!w.empty()) out.push_back({w, !out.empty() && gap == " "});
    w.clear();
    gap.clear();
  };
  for (char c : text) {
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '_') {
      w += c;
    } else {
      if (!w.empty()) flush();
      gap += c;
    }
  }
  flush();
  return out;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::vector<std::string> split_sentences(const std::string& text) {
  // A sentence ends with ". " followed by a capital (or a digit, "1/d_k ..."), or at the end.
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t i = 0; i + 2 < text.size(); ++i)
    if (text[i] == '.' && text[i + 1] == ' ' && (std::isupper(static_cast<unsigned char>(text[i + 2])))) {
      out.push_back(text.substr(start, i + 1 - start));
      start = i + 2;
    }
  out.push_back(text.substr(start));
  return out;
}

// The checks every rendering must pass; `where` names the combination for the failure message.
// `answered`: the question's first claim was run (without it the answer can only say so and
// what would measure it, in two sentences).
void expect_well_formed(const Answer& a, const std::string& where, bool answered) {
  SCOPED_TRACE(where);
  ASSERT_GE(a.sentences.size(), answered ? 3u : 2u);
  ASSERT_LE(a.sentences.size(), 6u);
  std::string text;
  for (const std::string& s : a.sentences) {
    ASSERT_FALSE(s.empty());
    EXPECT_FALSE(std::islower(static_cast<unsigned char>(s[0]))) << s;
    EXPECT_EQ(s.back(), '.') << s;
    text += s + " ";
  }
  ASSERT_FALSE(a.in_practice.empty());
  EXPECT_EQ(a.in_practice.back(), '.') << a.in_practice;
  text += a.in_practice;
  for (const char* bad : {"  ", " ,", " .", "..", "()", "( ", " )", "{", "}", "n/a", ";.", ":."})
    EXPECT_EQ(text.find(bad), std::string::npos) << "\"" << bad << "\" in: " << text;
  // A number that was not finite ("nan", "inf" as a value; "give inf in softmax" is a word).
  const std::vector<Word> words = words_of(text);
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i].text;
    EXPECT_FALSE(w == "nan" || (w == "inf" && (i + 1 == words.size() || words[i + 1].text != "in"))) << text;
    // No word doubled ("the the", "only only").
    EXPECT_FALSE(words[i].after_one_space && lower(w) == lower(words[i - 1].text)) << "doubled word \"" << w << "\" in: " << text;
    EXPECT_FALSE(is_code_identifier(w)) << "identifier \"" << w << "\" in: " << text;
  }
  // Each sentence is split where it should be: every sentence is counted once.
  EXPECT_EQ(split_sentences(text.substr(0, text.size() - a.in_practice.size() - 1)).size(), a.sentences.size()) << text;
}

std::string flat(const Answer& a) {
  std::string s;
  for (const std::string& x : a.sentences) s += x + " ";
  return s + "| " + a.in_practice;
}

// Calls check(ledger, states) for every combination of claim verdicts (not run included) with
// consistent parts, and for every combination of one claim's parts with the others holding; each
// with and without facts, and with the facts' directions flipped.
void for_each_combination(const std::string& anchor,
                          const std::function<void(const Ledger&, const std::vector<State>&, bool, const std::string&)>& check) {
  const std::vector<AnswerInput>& inputs = answer_inputs(anchor);
  const size_t n = inputs.size();
  std::vector<size_t> idx(n, 0);
  for (;;) {
    for (int facts = 0; facts < 3; ++facts) {
      Ledger ledger;
      std::vector<State> states;
      std::string where = anchor;
      for (size_t i = 0; i < n; ++i) {
        const State s = kClaimStates[idx[i]];
        states.push_back(s);
        where += " " + inputs[i].claim + "=" + (s ? verdict_text(*s) : "not run");
        if (s) ledger.claims[inputs[i].claim] = make_claim(inputs[i].claim, *s, inputs[i].parts,
                                                             parts_for(*s, inputs[i].parts.size()), facts > 0, facts == 1);
      }
      check(ledger, states, facts > 0, where + " facts=" + std::to_string(facts));
    }
    size_t k = 0;
    while (k < n && ++idx[k] == kClaimStates.size()) idx[k++] = 0;
    if (k == n) break;
  }
  // Every combination of each claim's parts, the other claims holding.
  for (size_t i = 0; i < n; ++i) {
    const size_t parts = inputs[i].parts.size();
    if (parts < 2) continue;
    std::vector<size_t> p(parts, 0);
    for (;;) {
      Ledger ledger;
      std::vector<State> states;
      std::string where = anchor + " parts of " + inputs[i].claim + ":";
      for (size_t j = 0; j < n; ++j) {
        std::vector<Verdict> pv = parts_for(Verdict::holds, inputs[j].parts.size());
        if (j == i)
          for (size_t q = 0; q < parts; ++q) pv[q] = kPartStates[p[q]], where += std::string(" ") + verdict_text(pv[q]);
        ledger.claims[inputs[j].claim] = make_claim(inputs[j].claim, j == i ? Verdict::does_not_hold : Verdict::holds,
                                                    inputs[j].parts, pv, true, true);
        states.push_back(j == i ? State(Verdict::does_not_hold) : State(Verdict::holds));
      }
      check(ledger, states, true, where);
      size_t k = 0;
      while (k < parts && ++p[k] == kPartStates.size()) p[k++] = 0;
      if (k == parts) break;
    }
  }
}

TEST(Answers, EveryCombinationOfVerdictsRendersAWellFormedParagraph) {
  int rendered = 0;
  for (const std::string& anchor : answered_questions())
    for_each_combination(anchor, [&](const Ledger& ledger, const std::vector<State>&, bool, const std::string& where) {
      expect_well_formed(compose_answer(ledger, anchor), where, ledger.claims.count(answer_inputs(anchor)[0].claim) > 0);
      ++rendered;
    });
  // 5^4 embedding and 5^5 attention combinations alone, three fact variants each.
  EXPECT_GT(rendered, 3 * (625 + 3125));
}

// A claim not run is said to be so; a claim that was run is never said not to have been.
TEST(Answers, AClaimIsSaidNotRunExactlyWhenItWasNotRun) {
  for (const std::string& anchor : answered_questions())
    for_each_combination(anchor, [&](const Ledger& ledger, const std::vector<State>& states, bool, const std::string& where) {
      const std::string text = flat(compose_answer(ledger, anchor));
      const std::vector<AnswerInput>& inputs = answer_inputs(anchor);
      for (size_t i = 0; i < inputs.size(); ++i) {
        const bool says = text.find(inputs[i].claim + " was not run") != std::string::npos;
        EXPECT_EQ(says, !states[i].has_value()) << where << "\n" << text;
      }
    });
}

TEST(Answers, TheWordingFollowsTheVerdicts) {
  for_each_combination("q-embedding", [](const Ledger& ledger, const std::vector<State>& s, bool, const std::string& where) {
    const std::string text = flat(compose_answer(ledger, "q-embedding"));
    const State e4 = s[0];
    EXPECT_EQ(text.find("only for a table initialised small") != std::string::npos, e4 == Verdict::holds_only_if) << where << text;
    EXPECT_EQ(text.rfind("Not to match", 0) == 0, e4 == Verdict::does_not_hold) << where << text;
    EXPECT_EQ(text.find("Keep ×√d_model with an N(0, 1/d_model)") != std::string::npos ||
                  text.find("keep ×√d_model with an N(0, 1/d_model)") != std::string::npos,
              e4 == Verdict::holds_only_if) << where << text;
  });
  for_each_combination("q-attention", [](const Ledger& ledger, const std::vector<State>& s, bool facts, const std::string& where) {
    const std::string text = flat(compose_answer(ledger, "q-attention"));
    const double ratio = ledger.claims.count("A6") && ledger.claims.at("A6").facts.contains("first_layer_grad_ratio_dk256")
                             ? ledger.claims.at("A6").facts["first_layer_grad_ratio_dk256"].get<double>() : 1.0;
    // The direction of A6's effect is stated when known: larger unscaled gradients are "larger, not smaller".
    EXPECT_EQ(text.find("larger, not smaller") != std::string::npos, facts && s[2] == Verdict::does_not_hold && ratio < 1)
        << where << text;
    // Never both directions at once.
    EXPECT_FALSE(text.find("shrink") != std::string::npos && text.find("larger, not smaller") != std::string::npos) << where << text;
    if (ledger.claims.count("A3") && ledger.claims.at("A3").facts.contains("loss_ratio_dk256") &&
        text.find("Dividing by d_k instead") != std::string::npos) {
      const double over = ledger.claims.at("A3").facts["loss_ratio_dk256"].get<double>();
      EXPECT_NE(text.find(over < 1 ? "(lower)" : "(higher)"), std::string::npos) << where << text;
    }
  });
}

TEST(Answers, AFollowUpOpensWithTheAnswerItsVerdictGives) {
  Ledger ledger;
  ledger.claims["A11"] = make_claim("A11", Verdict::does_not_hold, {}, {}, true, true);
  EXPECT_EQ(compose_answer(ledger, "q-t5").sentences[0].rfind("Not in training", 0), 0u);
  ledger.claims["A11"] = make_claim("A11", Verdict::holds, {}, {}, true, true);
  EXPECT_EQ(compose_answer(ledger, "q-t5").sentences[0].rfind("Yes", 0), 0u);
  ledger.claims["A11"] = make_claim("A11", Verdict::holds_only_if, {}, {}, true, true);
  EXPECT_NE(compose_answer(ledger, "q-t5").sentences[0].find("when d_k = 256"), std::string::npos);
  EXPECT_THROW(compose_answer(ledger, "q-unknown"), scalelab::Error);
}

TEST(PlainWords, IdentifiersBecomeWordsAndMathNamesStay) {
  EXPECT_EQ(plain_words("normal_inv_d × sqrt_d vs inv_sqrt_dk"), "N(0, 1/d) × √d vs 1/√d_k");
  EXPECT_EQ(plain_words("encoder layer 0 self_attn: qk_matmul"), "encoder layer 0 self-attention: QKᵀ product");
  EXPECT_EQ(plain_words("fold_into_init"), "fold into init");
  EXPECT_EQ(plain_words("d_model, d_k, W_q, q_i and GGML_PREC_F32"), "d_model, d_k, W_q, q_i and GGML_PREC_F32");
  EXPECT_TRUE(is_code_identifier("xavier_uniform"));
  EXPECT_FALSE(is_code_identifier("d_model"));
  EXPECT_FALSE(is_code_identifier("plain"));
}

}  // namespace
}  // namespace scalelab::report
