#include "scalelab/report/question_figures.hpp"

#include <cmath>
#include <map>
#include <optional>

namespace scalelab::report {
namespace {

// Bars: one group per initialisation, one bar per embedding scale.
std::vector<PlotSpec> embedding_plots(const Ledger& ledger) {
  const std::vector<std::pair<std::string, std::string>> inits = {
      {"normal", "N(0, 1)"}, {"normal_inv_d", "N(0, 1/d)"}, {"xavier_uniform", "Xavier uniform"}};
  const std::vector<std::pair<std::string, std::string>> scales = {
      {"1", "×1 (unscaled)"}, {"sqrt_d", "×√d"}, {"d", "×d"}, {"inv_d", "×1/d"}};
  PlotSpec p;
  p.id = "answer-embedding";
  p.title = "Token vs position variance at init, per initialisation and embedding scale";
  p.kind = "bars";
  p.x_label = "initialisation of the embedding table";
  p.y_label = "Var(token) / Var(PE)";
  p.log_y = true;
  for (const auto& [key, label] : inits) p.cols.push_back(label);
  for (const auto& [scale, scale_label] : scales) {
    Series s{scale_label, {}};
    for (size_t i = 0; i < inits.size(); ++i)
      if (const auto v = fact_number(ledger, "E3", "ratio_" + inits[i].first + "_" + scale)) s.points.push_back({static_cast<double>(i), *v});
    if (!s.points.empty()) p.series.push_back(std::move(s));
  }
  if (p.series.empty()) return {};
  const double factor = threshold_number(ledger, "E4", "matched_factor").value_or(4.0);
  p.y_band = std::make_pair(1 / factor, factor);
  p.y_band_label = "matched (within " + std::to_string(static_cast<int>(std::lround(factor))) + "× of 1)";
  p.title += "; shaded: " + p.y_band_label;
  return {p};
}

std::vector<PlotSpec> attention_plots(const Ledger& ledger) {
  const std::vector<int> dks = {16, 64, 256};
  std::vector<PlotSpec> out;
  PlotSpec loss;
  loss.id = "answer-attention-loss";
  loss.title = "Final loss relative to 1/√d_k, against d_k (each scale at its best learning rate)";
  loss.kind = "lines";
  loss.x_label = "d_k (head dimension)";
  loss.y_label = "final loss ÷ final loss with 1/√d_k";
  loss.log_x = true;
  const std::vector<std::tuple<std::string, std::string, std::string>> scales = {
      {"A4", "loss_ratio_dk", "no scale"}, {"A3", "loss_ratio_dk", "1/d_k"}};
  Series reference{"1/√d_k (reference)", {}};
  for (const auto& [claim, prefix, label] : scales) {
    Series s{label, {}};
    for (int dk : dks)
      if (const auto v = fact_number(ledger, claim, prefix + std::to_string(dk))) s.points.push_back({static_cast<double>(dk), *v});
    if (!s.points.empty()) loss.series.push_back(std::move(s));
  }
  if (!loss.series.empty()) {
    for (int dk : dks) reference.points.push_back({static_cast<double>(dk), 1.0});
    loss.series.push_back(reference);
    out.push_back(loss);
  }
  PlotSpec sat;
  sat.id = "answer-attention-saturation";
  sat.title = "Share of saturated softmax rows at init without a scale, against d_k";
  sat.kind = "lines";
  sat.x_label = "d_k (head dimension)";
  sat.y_label = "share of rows with max p > 0.99";
  sat.log_x = true;
  Series s{"no scale, at init", {}};
  for (int dk : dks)
    if (const auto v = fact_number(ledger, "A4", "saturated_none_dk" + std::to_string(dk))) s.points.push_back({static_cast<double>(dk), *v});
  if (!s.points.empty()) {
    sat.series.push_back(std::move(s));
    out.push_back(sat);
  }
  return out;
}

}  // namespace

std::string answering_claim(const std::string& anchor) {
  static const std::map<std::string, std::string> m = {
      {"q-d-or-1-over-d", "E12"}, {"q-learnable", "E7"}, {"q-rope", "E11"}, {"q-tiny-dk", "A8"},
      {"q-t5", "A11"},           {"q-fp16", "E6"},      {"q-bert", "E9"},  {"q-mup", "B3"}};
  auto it = m.find(anchor);
  return it == m.end() ? "" : it->second;
}

std::vector<PlotSpec> question_plots(const Ledger& ledger, const std::string& anchor) {
  if (anchor == "q-embedding") return embedding_plots(ledger);
  if (anchor == "q-attention") return attention_plots(ledger);
  return {};
}

}  // namespace scalelab::report
