#include "scalelab/train/beam.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "scalelab/core/error.hpp"
#include "scalelab/train/decode.hpp"

namespace scalelab {
namespace {

struct Hypothesis {
  std::vector<int32_t> tokens;  // without <bos>
  double score = 0;             // sum of log-probabilities
};

struct Finished {
  std::vector<int32_t> tokens;  // without <eos>
  double normalized = 0;
};

struct Candidate {
  double score;
  int64_t hyp;
  int32_t token;
};

// log-softmax of one row, in double so that the order of the logits is kept.
void log_softmax(const float* z, int64_t V, std::vector<double>& out) {
  out.resize(V);
  const double m = *std::max_element(z, z + V);
  double sum = 0;
  for (int64_t v = 0; v < V; ++v) sum += std::exp(double(z[v]) - m);
  const double lse = m + std::log(sum);
  for (int64_t v = 0; v < V; ++v) out[v] = double(z[v]) - lse;
}

// Done when K hypotheses have finished and the K-th best of them scores at least as well as the
// best live hypothesis would if it ended now (its score over lp of its current length, as in
// Hugging Face's BeamHypotheses.is_done). Junk that finishes early therefore cannot stop the
// search while a better hypothesis is still growing; with K = 1 this stops exactly when greedy
// decoding would (the finished and the live candidate have the same length).
bool search_is_over(const std::vector<Finished>& finished, const std::vector<Hypothesis>& live,
                    int64_t K, double alpha) {
  if (static_cast<int64_t>(finished.size()) < K) return false;
  std::vector<double> scores;
  for (const Finished& f : finished) scores.push_back(f.normalized);
  std::nth_element(scores.begin(), scores.begin() + (K - 1), scores.end(), std::greater<>());
  const double kth_best = scores[K - 1];
  double best_live = -std::numeric_limits<double>::infinity();
  for (const Hypothesis& h : live) {
    const int64_t n = std::max<int64_t>(1, static_cast<int64_t>(h.tokens.size()));
    best_live = std::max(best_live, h.score / gnmt_length_penalty(n, alpha));
  }
  return kth_best >= best_live;
}

}  // namespace

double gnmt_length_penalty(int64_t length, double alpha) {
  return std::pow((5.0 + double(length)) / 6.0, alpha);
}

std::vector<std::vector<int32_t>> beam_decode(Transformer<float>& model, const Batch& batch,
                                              const BeamOptions& options) {
  SL_CHECK(options.beam >= 1, "beam size = ", options.beam, ": must be >= 1");
  SL_CHECK(options.length_penalty >= 0, "length penalty = ", options.length_penalty,
           ": must be >= 0");
  SL_CHECK(model.config().arch == Architecture::encoder_decoder,
           "beam search needs an encoder-decoder model");
  const int64_t B = batch.size, K = options.beam, V = model.config().tgt_vocab;
  const int64_t max_len = std::max<int64_t>(1, std::min<int64_t>(options.max_len,
                                                                 model.config().max_len - 1));
  // Every source repeated K times: row b*K + k is hypothesis k of source b.
  std::vector<int32_t> src(B * K * batch.src_len), src_lengths(B * K);
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t k = 0; k < K; ++k) {
      std::copy(batch.src.begin() + b * batch.src_len, batch.src.begin() + (b + 1) * batch.src_len,
                src.begin() + (b * K + k) * batch.src_len);
      src_lengths[b * K + k] = batch.src_lengths[b];
    }
  }
  ModelInput in{.batch = B * K, .src_len = batch.src_len, .tgt_len = 1, .src = src.data(),
                .src_lengths = src_lengths.data()};
  const ForwardMode eval{};
  model.encode(in, eval);

  std::vector<std::vector<Hypothesis>> live(B, std::vector<Hypothesis>(1));  // one: <bos>
  std::vector<std::vector<Finished>> finished(B);
  std::vector<bool> done(B, false);
  std::vector<double> logp;
  std::vector<Candidate> cand;
  for (int64_t t = 1; t <= max_len + 1; ++t) {
    const bool last = t == max_len + 1;  // max_len tokens emitted: only <eos> may follow
    // The decoder input: row b*K + k = <bos> + hypothesis k (rows without one repeat row 0).
    std::vector<int32_t> prefix(B * K * t, kPadId);
    for (int64_t b = 0; b < B; ++b) {
      for (int64_t k = 0; k < K; ++k) {
        const Hypothesis& h = live[b][std::min<int64_t>(k, live[b].size() - 1)];
        int32_t* row = prefix.data() + (b * K + k) * t;
        row[0] = kBosId;
        std::copy(h.tokens.begin(), h.tokens.end(), row + 1);
      }
    }
    in.tgt_len = t;
    in.tgt = prefix.data();
    const Tensor<float>& logits = model.decode(in, eval);
    bool all_done = true;
    for (int64_t b = 0; b < B; ++b) {
      if (done[b]) continue;
      cand.clear();
      for (int64_t k = 0; k < static_cast<int64_t>(live[b].size()); ++k) {
        log_softmax(logits.data() + ((b * K + k) * t + t - 1) * V, V, logp);
        for (int64_t v = 0; v < V; ++v) {
          if (!emittable_token(v) || (last && v != kEosId)) continue;
          cand.push_back({live[b][k].score + logp[v], k, static_cast<int32_t>(v)});
        }
      }
      // Best first; ties to the earlier hypothesis, then the smaller token (as argmax does).
      const size_t keep = std::min<size_t>(cand.size(), 2 * K);
      std::partial_sort(cand.begin(), cand.begin() + keep, cand.end(),
                        [](const Candidate& x, const Candidate& y) {
                          if (x.score != y.score) return x.score > y.score;
                          if (x.hyp != y.hyp) return x.hyp < y.hyp;
                          return x.token < y.token;
                        });
      std::vector<Hypothesis> next;
      for (size_t r = 0; r < keep && static_cast<int64_t>(next.size()) < K; ++r) {
        const Candidate& c = cand[r];
        const Hypothesis& h = live[b][c.hyp];
        if (c.token == kEosId) {
          if (static_cast<int64_t>(r) < K) {
            const int64_t n = static_cast<int64_t>(h.tokens.size()) + 1;
            finished[b].push_back({h.tokens, c.score / gnmt_length_penalty(n, options.length_penalty)});
          }
          continue;
        }
        Hypothesis e{h.tokens, c.score};
        e.tokens.push_back(c.token);
        next.push_back(std::move(e));
      }
      live[b] = std::move(next);
      done[b] = live[b].empty() || search_is_over(finished[b], live[b], K, options.length_penalty);
      all_done = all_done && done[b];
    }
    if (all_done) break;
  }
  std::vector<std::vector<int32_t>> out(B);
  for (int64_t b = 0; b < B; ++b) {
    const auto& f = finished[b];
    SL_CHECK(!f.empty(), "beam search: no finished hypothesis for source ", b);
    // The first of equal scores wins (the one finished earlier, i.e. ranked higher).
    size_t best = 0;
    for (size_t i = 1; i < f.size(); ++i)
      if (f[i].normalized > f[best].normalized) best = i;
    out[b] = f[best].tokens;
  }
  return out;
}

}  // namespace scalelab
