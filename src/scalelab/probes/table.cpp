#include "scalelab/probes/table.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>
#include <vector>

namespace scalelab::probes {

namespace {

std::string num(double v, int digits) {
  if (std::isnan(v)) return "-";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

// Characters on screen (UTF-8: continuation bytes do not count).
size_t display_width(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

struct Column {
  std::string title;
  std::string probe, field;  // empty probe: a label column
  std::string site_suffix;   // appended to the row's site (activation ops)
};

// A table whose rows are (stack, layer, site) and whose cells come from the summary.
void print_table(std::ostream& out, const std::string& title, const SeedSummary& s,
                 const std::vector<std::tuple<std::string, int64_t, std::string>>& rows,
                 const std::vector<Column>& cols, int64_t step) {
  if (rows.empty()) return;
  std::vector<std::vector<std::string>> cells;
  std::vector<std::string> head{"stack", "layer", "site"};
  for (const Column& c : cols) head.push_back(c.title);
  cells.push_back(head);
  for (const auto& [stack, layer, site] : rows) {
    std::vector<std::string> row{stack, layer < 0 ? "-" : std::to_string(layer), site};
    for (const Column& c : cols)
      row.push_back(format_cell(s.find(c.probe, stack, layer, site + c.site_suffix, -1, c.field, step)));
    cells.push_back(row);
  }
  std::vector<size_t> width(head.size(), 0);
  for (const auto& row : cells)
    for (size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], display_width(row[i]));
  out << "\n" << title << "\n";
  for (const auto& row : cells) {
    for (size_t i = 0; i < row.size(); ++i) {
      const std::string pad(width[i] - display_width(row[i]), ' ');
      out << (i ? "  " : "") << (i < 3 ? row[i] + pad : pad + row[i]);
    }
    out << "\n";
  }
}

}  // namespace

std::string format_number(double v, int digits) { return num(v, digits); }

std::string format_cell(const SeedSpread* s) {
  if (!s || s->finite_seeds == 0) return "-";
  std::string cell = num(s->median, 3);
  if (s->finite_seeds > 1) cell += "±" + num((s->max - s->min) / 2, 2);
  if (s->finite_seeds < static_cast<int64_t>(s->values.size())) cell += "*";  // some seeds NaN
  return cell;
}

void print_probe_tables(std::ostream& out, const SeedSummary& s, int64_t step) {
  out << "cells: median±(max-min)/2 over seeds; * = some seeds had no value; - = none\n";
  print_table(out, "Stack input x0 = s·E[ids] + P (real positions)", s, s.sites("embed"),
              {{"Var(token)", "embed", "var_token"},
               {"Var(position)", "embed", "var_position"},
               {"token/position", "embed", "token_position_ratio"},
               {"E|s·E|²", "embed", "token_sq_norm_mean"},
               {"Var(x0)", "embed", "var_input"}}, step);
  print_table(out,
              "Attention per layer, all heads (raw = q·k before scaling; logit = after scale, "
              "soft-cap, bias)",
              s, s.sites("attn_softmax"),
              {{"Var(q)", "attn_qk", "q_var"},
               {"Var(k)", "attn_qk", "k_var"},
               {"Var(raw)", "attn_logits_raw", "var"},
               {"Var(logit)", "attn_logits", "var"},
               {"in[-3,3]", "attn_logits", "within_share"},
               {"max|logit|", "attn_logits", "max_abs"},
               {"H/ln n", "attn_softmax", "entropy_norm_mean"},
               {"max p", "attn_softmax", "max_p_mean"},
               {"p>0.99", "attn_softmax", "saturated_share"},
               {"|J|_F", "attn_softmax", "jacobian_fro_mean"}}, step);
  print_table(out, "Residual stream after each sublayer, and the sublayer's output f(.)", s,
              s.sites("residual"),
              {{"Var(x)", "residual", "var"},
               {"max|x|", "residual", "max_abs"},
               {"f16 bits", "activation", "f16_headroom_bits", ".residual"},
               {"Var(f)", "sublayer", "var"},
               {"max|f|", "sublayer", "max_abs"}}, step);
  // Gradients: per layer, then the tensors outside layers and the whole model.
  print_table(out,
              "Gradients per layer (before clipping) and the first optimiser step's "
              "|Δw|/|w|",
              s, s.sites("grad_layer"),
              {{"|grad|", "grad_layer", "grad_norm"},
               {"|w|", "grad_layer", "param_norm"},
               {"|Δw|/|w|", "grad_layer", "update_ratio"}}, step);
  std::vector<std::tuple<std::string, int64_t, std::string>> ops;
  for (const auto& site : s.sites("activation"))
    if (std::get<1>(site) < 0) ops.push_back(site);
  print_table(out, "Largest |value| outside the layers and its headroom to the f16 maximum 65504",
              s, ops,
              {{"max|x|", "activation", "max_abs"},
               {"f16 bits", "activation", "f16_headroom_bits"},
               {">65504", "activation", "over_f16"}}, step);
}

}  // namespace scalelab::probes
