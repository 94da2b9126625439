#include "scalelab/report/plain_words.hpp"

#include <cctype>
#include <map>

namespace scalelab::report {
namespace {

// Config values and op names with a reading of their own; any other identifier reads as its
// parts ("fold_into_init" -> "fold into init").
const std::map<std::string, std::string>& known_words() {
  static const std::map<std::string, std::string> words = {
      {"sqrt_d", "√d"},
      {"inv_sqrt_d", "1/√d"},
      {"inv_d", "1/d"},
      {"inv_sqrt_dk", "1/√d_k"},
      {"inv_dk", "1/d_k"},
      {"sqrt_dk", "√d_k"},
      {"normal_inv_d", "N(0, 1/d)"},
      {"normal_inv_sqrt_d", "N(0, 1/√d)"},
      {"xavier_uniform", "Xavier uniform"},
      {"xavier_normal", "Xavier normal"},
      {"encoder_decoder", "encoder-decoder"},
      {"decoder_only", "decoder-only"},
      {"self_attn", "self-attention"},
      {"cross_attn", "cross-attention"},
      {"qk_matmul", "QKᵀ product"},
      {"pv_matmul", "PV product"},
      {"q_scale", "query scaling"},
      {"logit_scale", "logit scaling"},
      {"softmax_max_sub", "softmax max subtraction"},
      {"softmax_exp", "softmax exponential"},
      {"softmax_sum", "softmax sum"},
      {"softmax_div", "softmax division"},
      {"layernorm_sum", "LayerNorm sum"},
      {"layernorm_var", "LayerNorm variance"},
      {"layernorm_normalize", "LayerNorm normalisation"},
      {"residual_add", "residual addition"},
      {"activation_grad", "activation gradient"},
      {"weight_grad", "weight gradient"},
      {"mup_base_width", "muP base width"},
  };
  return words;
}

bool word_char(unsigned char c) { return std::isalnum(c) || c == '_'; }

}  // namespace

bool is_code_identifier(const std::string& token) {
  const size_t us = token.find('_');
  if (us == std::string::npos || us == 0 || us + 1 >= token.size()) return false;
  // d_model, d_k, W_q, q_i, E_t: a one-letter stem is mathematical notation.
  if (us == 1) return false;
  // GGML_PREC_F32: an upper-case constant quoted from another project.
  bool lower = false;
  for (unsigned char c : token) lower = lower || std::islower(c);
  return lower;
}

std::string plain_words(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    if (!word_char(static_cast<unsigned char>(s[i]))) {
      out += s[i++];
      continue;
    }
    size_t j = i;
    while (j < s.size() && word_char(static_cast<unsigned char>(s[j]))) ++j;
    std::string token = s.substr(i, j - i);
    if (is_code_identifier(token)) {
      auto it = known_words().find(token);
      if (it != known_words().end()) {
        token = it->second;
      } else {
        for (char& c : token)
          if (c == '_') c = ' ';
      }
    }
    out += token;
    i = j;
  }
  return out;
}

namespace {

void plain_inline(Inline& text) {
  for (Span& s : text)
    if (s.kind != Span::code) s.content = plain_words(s.content);
}

}  // namespace

void plain_prose(Document& doc) {
  for (Block& b : doc.blocks) {
    if (auto* h = std::get_if<Heading>(&b)) plain_inline(h->text);
    else if (auto* p = std::get_if<Paragraph>(&b)) plain_inline(p->text);
    else if (auto* l = std::get_if<List>(&b)) for (Inline& item : l->items) plain_inline(item);
    else if (auto* t = std::get_if<Table>(&b)) {
      for (std::string& h : t->header) h = plain_words(h);
      for (auto& row : t->rows)
        for (Inline& cell : row) plain_inline(cell);
    } else if (auto* f = std::get_if<Figure>(&b)) {
      f->title = plain_words(f->title);
    } else if (auto* d = std::get_if<Details>(&b)) {
      d->summary = plain_words(d->summary);  // the config it folds stays as written
    } else if (auto* fold = std::get_if<FoldBegin>(&b)) {
      fold->summary = plain_words(fold->summary);
    }
  }
}

PlotSpec plain_plot(PlotSpec spec) {
  spec.title = plain_words(spec.title);
  spec.x_label = plain_words(spec.x_label);
  spec.y_label = plain_words(spec.y_label);
  for (Series& s : spec.series) s.label = plain_words(s.label);
  for (std::string& r : spec.rows) r = plain_words(r);
  for (std::string& c : spec.cols) c = plain_words(c);
  return spec;
}

}  // namespace scalelab::report
