// report/plain_words: the report's prose in words and symbols, never code identifiers.
//
// Claim records carry the config schema's values and the probes' op names (sqrt_d, normal_inv_d,
// inv_sqrt_dk, qk_matmul, self_attn, ...) in their sentences, arm names and plot labels. A reader
// of the report should see √d, N(0, 1/d), 1/√d_k, "the QKᵀ product". plain_words rewrites every
// such token; mathematical names with a one-letter stem (d_model, d_k, W_q, q_i) stay, as do
// upper-case constants quoted from other projects (GGML_PREC_F32).
#pragma once
#include <string>

#include "scalelab/report/document.hpp"
#include "scalelab/report/ledger_files.hpp"

namespace scalelab::report {

// `s` with each identifier token (letters/digits joined by '_') replaced by its words: a known
// one by its symbol or phrase, any other by its parts joined with spaces.
std::string plain_words(const std::string& s);

// True when `token` is an identifier plain_words would rewrite (for tests).
bool is_code_identifier(const std::string& token);

// Rewrites the prose of a document: headings, paragraphs, lists, table cells and figure titles;
// code spans and Details (resolved configs) are kept as they are.
void plain_prose(Document& doc);

// A plot's title, axis labels, series labels and heatmap rows/columns in words.
PlotSpec plain_plot(PlotSpec spec);

}  // namespace scalelab::report
