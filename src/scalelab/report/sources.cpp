#include "scalelab/report/sources.hpp"

namespace scalelab::report {
namespace {

Table text_table(std::vector<std::string> header, const std::vector<std::vector<const char*>>& rows) {
  Table t{std::move(header), {}, {}, true};
  t.numeric.assign(t.header.size(), false);
  for (const auto& row : rows) {
    std::vector<Inline> cells;
    for (const char* cell : row) cells.push_back({txt(cell)});
    t.rows.push_back(std::move(cells));
  }
  return t;
}

}  // namespace

std::vector<Block> sources_blocks() {
  std::vector<Block> out;
  out.push_back(Heading{2, "sources", {txt("Sources: what the papers and the reference implementations do")}});
  out.push_back(Paragraph{
      {txt("Read by hand from each paper and from each project's own code (where a blog post or an "
           "interview answer disagrees with the code, the code wins). Nothing in this section is "
           "measured by scalelab; the presets ("),
       code("scalelab presets"), txt(") reproduce these combinations.")},
      "note"});

  out.push_back(Heading{3, "sources-embedding", {txt("Embedding scale, initialisation and output are one coupled choice")}});
  out.push_back(text_table(
      {"anchor", "embedding init", "input scale", "tied output", "positions"},
      {
          {"tensor2tensor (layers/modalities.py, common_hparams.py)", "N(0, d^-0.5)",
           "×sqrt(d) (multiply_embedding_mode = \"sqrt_depth\")", "shared with the softmax; logits = h·Eᵀ unscaled",
           "sinusoidal \"timing\" (also learned)"},
          {"fairseq (models/transformer)", "N(0, d^-0.5), padding row zero", "×sqrt(d) (embed_scale; --no-scale-embedding)",
           "optional sharing", "sinusoidal or learned; optional layernorm_embedding"},
          {"Annotated Transformer", "Xavier uniform on every matrix, embeddings too", "×sqrt(d_model)",
           "not tied (the tying snippet is dead code)", "sinusoidal"},
          {"Mesh TensorFlow / T5 (HF modeling_t5.py)", "N(0, 1)", "none",
           "when tied, the decoder output is multiplied by d^-0.5",
           "relative position bias: 32 buckets, max distance 128, a scalar per head, computed in layer 0 and shared"},
          {"Marian (C++)", "uniform ±sqrt(3/d) (rows of about unit norm)", "×sqrt(d) only with sinusoidal positions",
           "--tied-embeddings(-all/-src)", "sinusoidal or trainable"},
          {"x-transformers", "Kaiming normal", "none", "optional", "learned absolute ×d^-0.5, or RoPE, ALiBi, T5 bias"},
          {"Gemma (HF modeling_gemma.py, llama.cpp)", "N(0, initializer_range)",
           "×sqrt(hidden), the constant rounded to the activation dtype (bf16: sqrt(3072) → 55.5)", "tied", "RoPE"},
          {"LLaMA / OLMo 2", "N(0, small std)", "none", "untied", "RoPE"},
      }));

  out.push_back(Heading{3, "sources-attention", {txt("Attention scale")}});
  out.push_back(text_table(
      {"anchor", "scale", "where it is applied"},
      {
          {"Attention Is All You Need / Annotated Transformer", "1/sqrt(d_k)", "on the logits after QKᵀ"},
          {"tensor2tensor, fairseq", "1/sqrt(d_k)", "on q before QKᵀ (q *= depth**-0.5)"},
          {"Mesh TF / T5", "none at run time",
           "folded into W_q's init: std = (d_model · d_kv)^-0.5; k, v std d_model^-0.5"},
          {"muP (microsoft/mup)", "1/d (the README uses 8/d, equal to 1/sqrt(d) at d = 64)",
           "on q; W_q and the readout zero-initialised"},
          {"FlashAttention, PyTorch SDPA", "softmax_scale / scale, default 1/sqrt(d)", "on the logits inside the kernel"},
          {"ggml / llama.cpp", "kq_scale in soft_max_ext / flash_attn_ext; Gemma pre-scales q", "kernel argument"},
          {"Gemma 2", "1/sqrt(query_pre_attn_scalar) (27B: 1/sqrt(144), not 1/sqrt(128)); tanh soft-cap 50 on "
                      "logits, 30 on final logits",
           "logits"},
          {"OLMo 2, ViT-22B", "1/sqrt(d) after RMS/LayerNorm of q and k (QK-norm)", "logits"},
          {"x-transformers", "1/sqrt(d), custom, QK-norm with fixed scale 10 or learned per-dim scale, tanh "
                             "soft-clamp 50",
           "logits or q"},
          {"FlashAttention softcap", "cap·tanh(S·scale/cap)", "logits"},
      }));

  out.push_back(Heading{3, "sources-norm", {txt("Norm placement")}});
  out.push_back(List{{
      {txt("Post-LN (x = LN(x + f(x))) is the published 2017 model and fairseq's and Marian's default.")},
      {txt("Pre-LN (x = x + f(LN(x)), plus a final LN) was tensor2tensor's base config from late 2017 and is "
           "what the Annotated Transformer's code does (its prose describes Post-LN). Xiong et al. 2020 "
           "analyse it: at init the last layer's gradient is O(d·sqrt(ln d)) for Post-LN and "
           "O(d·sqrt(ln d / L)) for Pre-LN, so Post-LN needs warm-up and Pre-LN can go without.")},
      {txt("T5 and LLaMA: pre-norm with RMSNorm (variance computed in f32). Gemma 2: sandwich norm.")},
  }});

  out.push_back(Heading{3, "sources-papers", {txt("What the papers say")}});
  out.push_back(List{{
      {txt("Attention Is All You Need §3.2.1: the authors suspect that large dot products push softmax into "
           "regions with small gradients; footnote 4 gives Var(q·k) = d_k for unit-variance components. "
           "The paper has no ablation that removes the scale. Table 3 rows (B) vary d_k only (d_k 16: "
           "BLEU 25.1, 32: 25.4, 64: 25.8); row (E), learned positions instead of sinusoids: 25.7 vs 25.8.")},
      {txt("§3.4 states the ×sqrt(d_model) and the weight sharing with no reason given.")},
      {txt("Xiong et al. 2020 discuss Post-LN vs Pre-LN gradients and warm-up; they do not discuss the "
           "embedding scale.")},
      {txt("FP16: the reason to pre-scale q is to keep QKᵀ inside the FP16 range (max 65504); frameworks "
           "also keep softmax and the QKᵀ accumulation in f32 (FlashAttention; llama.cpp's default "
           "GGML_PREC_F32). Mixed-precision training uses dynamic loss scaling (fairseq: initial scale 2^15; "
           "Micikevicius et al. 2018).")},
      {txt("Beyond the seeds: Xiong et al. 2020 (B1), Dehghani et al. 2023 and Gemma 2's soft-capping (B2), "
           "Yang et al. 2022, Tensor Programs V (B3), Micikevicius et al. 2018 (B4).")},
      {txt("\"Why multiply the embedding by sqrt(d_model)?\" is asked again and again in the issue trackers "
           "of the Annotated Transformer, the PyTorch tutorials and examples, THUMT, WeNet, Keras and "
           "others, and is rarely answered with evidence.")},
  }});
  return out;
}

}  // namespace scalelab::report
