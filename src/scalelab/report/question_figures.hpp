// report/question_figures: the figure that shows each question's answer, above its evidence.
//
//   the embedding question   Var(token)/Var(PE) at init per initialisation × embedding scale, on
//                            a log axis, the "matched" band of E4's criterion shaded (E3's facts)
//   the attention question   the final loss relative to 1/√d_k against d_k, per scale (A4, A3),
//                            and the share of saturated softmax rows at init without a scale (A4)
//   each follow-up           the main plot of the claim that answers it (answering_claim), the
//                            figure that claim's section draws, shown again (not drawn twice)
//
// Every value is read from the claims' facts and plots; a figure whose data are absent is left
// out. Labels are words and symbols (√d, 1/√d_k, N(0, 1/d)), never config identifiers.
#pragma once
#include <string>
#include <vector>

#include "scalelab/report/ledger_files.hpp"

namespace scalelab::report {

// The plot specs drawn for the question at `anchor` (the two source questions); empty when the
// ledger lacks the data, and for a follow-up (see answering_claim).
std::vector<PlotSpec> question_plots(const Ledger& ledger, const std::string& anchor);

// The claim whose main plot answers the follow-up at `anchor`; "" for any other anchor.
std::string answering_claim(const std::string& anchor);

}  // namespace scalelab::report
