// report/answers: a direct answer to each question of the report's opening, composed from the
// verdicts and named numbers ("facts") of the claims behind it, then one "In practice:" line with
// the recommendation those verdicts support, stated with its conditions.
//
// Each sentence's wording is chosen by the verdict of one claim or one judged part of a claim
// (a part read when the claim was judged in parts, the claim's own verdict otherwise); every
// number is read from the claim's JSON and left out when absent. A claim missing from the ledger
// or not testable is said to be so. tests/report/answers_test.cpp renders every combination of
// verdicts each question can receive.
#pragma once
#include <string>
#include <vector>

#include "scalelab/report/document.hpp"
#include "scalelab/report/ledger_files.hpp"

namespace scalelab::report {

struct Answer {
  std::vector<std::string> sentences;  // three to six, each ending in a full stop
  std::string in_practice;             // the recommendation, without its "In practice:" label
};

// What a question's answer reads: these claims, and of each these judged parts (by name).
struct AnswerInput {
  std::string claim;
  std::vector<std::string> parts;
};

// The anchors of the questions with a composed answer, in the opening's order: "q-embedding",
// "q-attention", then the follow-ups.
const std::vector<std::string>& answered_questions();

// The claims and parts the answer to `anchor` reads (for the combination test).
const std::vector<AnswerInput>& answer_inputs(const std::string& anchor);

// The answer to the question at `anchor` (one of answered_questions()).
Answer compose_answer(const Ledger& ledger, const std::string& anchor);

// The answer as the report's blocks: a paragraph, then "In practice: ...".
std::vector<Block> answer_blocks(const Answer& answer);

}  // namespace scalelab::report
