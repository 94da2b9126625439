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

namespace {

// One source's search state.
struct SourceBeam {
  std::vector<Hypothesis> live{Hypothesis{}};  // starts with one: <bos>
  std::vector<Finished> finished;
  std::vector<int64_t> parents;  // of the live hypotheses after advance(): index in the old live
  bool done = false;
};

// The ensemble's next-token log-probabilities for one hypothesis, given each member's logits
// (logits_of(m)): log p(v) = log((1/M) sum_m p_m(v)), the mean of the members' distributions
// (a log-sum-exp over members, shifted by the largest). With one member this is exactly
// log_softmax: no mixing step, so no rounding is added.
template <class MemberLogits>
void ensemble_log_probs(int64_t M, int64_t V, MemberLogits logits_of, std::vector<double>& logp,
                        std::vector<std::vector<double>>& members) {
  if (M == 1) return log_softmax(logits_of(0), V, logp);
  members.resize(M);
  for (int64_t m = 0; m < M; ++m) log_softmax(logits_of(m), V, members[m]);
  logp.resize(V);
  for (int64_t v = 0; v < V; ++v) {
    double top = members[0][v];
    for (int64_t m = 1; m < M; ++m) top = std::max(top, members[m][v]);
    double sum = 0;
    for (int64_t m = 0; m < M; ++m) sum += std::exp(members[m][v] - top);
    logp[v] = top + std::log(sum / double(M));
  }
}

// Extends the live hypotheses of one source given each one's next-token log-probabilities
// (log_probs_of(k, logp) fills logp), keeps the best as in the header comment, and records each
// new live hypothesis' parent.
template <class LogProbs>
void advance(SourceBeam& s, int64_t K, int64_t V, bool last, double alpha, LogProbs log_probs_of,
             std::vector<double>& logp, std::vector<Candidate>& cand) {
  cand.clear();
  for (int64_t k = 0; k < static_cast<int64_t>(s.live.size()); ++k) {
    log_probs_of(k, logp);
    for (int64_t v = 0; v < V; ++v) {
      if (!emittable_token(v) || (last && v != kEosId)) continue;
      cand.push_back({s.live[k].score + logp[v], k, static_cast<int32_t>(v)});
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
  s.parents.clear();
  for (size_t r = 0; r < keep && static_cast<int64_t>(next.size()) < K; ++r) {
    const Candidate& c = cand[r];
    const Hypothesis& h = s.live[c.hyp];
    if (c.token == kEosId) {
      if (static_cast<int64_t>(r) < K) {
        const int64_t n = static_cast<int64_t>(h.tokens.size()) + 1;
        s.finished.push_back({h.tokens, c.score / gnmt_length_penalty(n, alpha)});
      }
      continue;
    }
    Hypothesis e{h.tokens, c.score};
    e.tokens.push_back(c.token);
    next.push_back(std::move(e));
    s.parents.push_back(c.hyp);
  }
  s.live = std::move(next);
  s.done = s.live.empty() || search_is_over(s.finished, s.live, K, alpha);
}

// The uncached reference: every step re-runs the decoder on each hypothesis' whole prefix.
void search_uncached(const Ensemble& models, const Batch& batch, int64_t K, int64_t max_len,
                     double alpha, std::vector<SourceBeam>& beams) {
  const int64_t B = batch.size, V = models[0]->config().tgt_vocab;
  const int64_t M = static_cast<int64_t>(models.size());
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
  for (Transformer<float>* model : models) model->encode(in, eval);
  std::vector<double> logp;
  std::vector<std::vector<double>> member_logp;
  std::vector<Candidate> cand;
  std::vector<const float*> logits(M);  // each member's [B*K*t, V]
  for (int64_t t = 1; t <= max_len + 1; ++t) {
    const bool last = t == max_len + 1;  // max_len tokens emitted: only <eos> may follow
    // The decoder input: row b*K + k = <bos> + hypothesis k (rows without one repeat the last).
    std::vector<int32_t> prefix(B * K * t, kPadId);
    for (int64_t b = 0; b < B; ++b) {
      for (int64_t k = 0; k < K; ++k) {
        const auto& live = beams[b].live;
        const Hypothesis& h = live[std::min<int64_t>(k, live.size() - 1)];
        int32_t* row = prefix.data() + (b * K + k) * t;
        row[0] = kBosId;
        std::copy(h.tokens.begin(), h.tokens.end(), row + 1);
      }
    }
    in.tgt_len = t;
    in.tgt = prefix.data();
    for (int64_t m = 0; m < M; ++m) logits[m] = models[m]->decode(in, eval).data();
    bool all_done = true;
    for (int64_t b = 0; b < B; ++b) {
      if (beams[b].done) continue;
      const auto log_probs_of = [&](int64_t k, std::vector<double>& out) {
        ensemble_log_probs(
            M, V, [&](int64_t m) { return logits[m] + ((b * K + k) * t + t - 1) * V; }, out,
            member_logp);
      };
      advance(beams[b], K, V, last, alpha, log_probs_of, logp, cand);
      all_done = all_done && beams[b].done;
    }
    if (all_done) break;
  }
}

// The cached search: row a*K + k of the cache is hypothesis k of the a-th source still searching
// (rows past a source's live count repeat its last hypothesis). After each step the rows are
// re-selected from the parents, and the sources that are done leave.
void search_cached(const Ensemble& models, const Batch& batch, int64_t K, int64_t max_len,
                   double alpha, std::vector<SourceBeam>& beams) {
  const int64_t B = batch.size, V = models[0]->config().tgt_vocab;
  const int64_t M = static_cast<int64_t>(models.size());
  ModelInput in{.batch = B, .src_len = batch.src_len, .tgt_len = 1, .src = batch.src.data(),
                .src_lengths = batch.src_lengths.data()};
  std::vector<DecoderCache<float>> caches(M);  // one per member, rows kept in step
  for (int64_t m = 0; m < M; ++m)
    models[m]->start_decoding(in, caches[m], max_len + 1);  // each source encoded once
  std::vector<int64_t> active(B), rows_from(B * K);
  for (int64_t b = 0; b < B; ++b) active[b] = b;
  for (int64_t r = 0; r < B * K; ++r) rows_from[r] = r / K;
  for (DecoderCache<float>& cache : caches) cache.select_rows(rows_from);  // K rows per source
  std::vector<int32_t> tokens(B * K, kBosId);
  std::vector<double> logp;
  std::vector<std::vector<double>> member_logp;
  std::vector<Candidate> cand;
  std::vector<const float*> logits(M);  // each member's [rows, V]
  for (int64_t t = 1; t <= max_len + 1; ++t) {
    const bool last = t == max_len + 1;
    for (int64_t m = 0; m < M; ++m)
      logits[m] = models[m]->decode_step(caches[m], tokens.data()).data();
    std::vector<int64_t> still;
    rows_from.clear();
    tokens.clear();
    for (size_t a = 0; a < active.size(); ++a) {
      SourceBeam& s = beams[active[a]];
      const auto log_probs_of = [&](int64_t k, std::vector<double>& out) {
        ensemble_log_probs(
            M, V, [&](int64_t m) { return logits[m] + (int64_t(a) * K + k) * V; }, out,
            member_logp);
      };
      advance(s, K, V, last, alpha, log_probs_of, logp, cand);
      if (s.done) continue;
      still.push_back(active[a]);
      for (int64_t k = 0; k < K; ++k) {  // the new row k continues from its parent's row
        const int64_t j = std::min<int64_t>(k, s.live.size() - 1);
        rows_from.push_back(int64_t(a) * K + s.parents[j]);
        tokens.push_back(s.live[j].tokens.back());
      }
    }
    if (still.empty()) break;
    active.swap(still);
    for (DecoderCache<float>& cache : caches) cache.select_rows(rows_from);
  }
}

}  // namespace

void check_ensemble(const Ensemble& models) {
  SL_CHECK(!models.empty(), "beam search: no model given");
  const ModelConfig& first = models[0]->config();
  for (size_t m = 0; m < models.size(); ++m) {
    const ModelConfig& c = models[m]->config();
    SL_CHECK(c.arch == Architecture::encoder_decoder, "beam search needs an encoder-decoder model",
             models.size() > 1 ? " (ensemble member " + std::to_string(m) + " is decoder-only)" : "");
    SL_CHECK(c.src_vocab == first.src_vocab && c.tgt_vocab == first.tgt_vocab,
             "ensemble member ", m, " has vocabularies of ", c.src_vocab, " source / ", c.tgt_vocab,
             " target ids, member 0 has ", first.src_vocab, " / ", first.tgt_vocab,
             ": the members must share their vocabularies");
  }
}

std::vector<std::vector<BeamResult>> beam_search_nbest(const Ensemble& models, const Batch& batch,
                                                       const BeamOptions& options) {
  SL_CHECK(options.beam >= 1, "beam size = ", options.beam, ": must be >= 1");
  SL_CHECK(options.length_penalty >= 0, "length penalty = ", options.length_penalty,
           ": must be >= 0");
  check_ensemble(models);
  int64_t model_max_len = models[0]->config().max_len;
  for (const Transformer<float>* m : models) model_max_len = std::min(model_max_len, m->config().max_len);
  const int64_t max_len = std::max<int64_t>(1, std::min<int64_t>(options.max_len, model_max_len - 1));
  std::vector<SourceBeam> beams(batch.size);
  if (options.use_cache) search_cached(models, batch, options.beam, max_len, options.length_penalty, beams);
  else search_uncached(models, batch, options.beam, max_len, options.length_penalty, beams);
  std::vector<std::vector<BeamResult>> out(batch.size);
  for (int64_t b = 0; b < batch.size; ++b) {
    const auto& f = beams[b].finished;
    SL_CHECK(!f.empty(), "beam search: no finished hypothesis for source ", b);
    for (const Finished& h : f) out[b].push_back({h.tokens, h.normalized});
    // Equal scores keep their finishing order (the one finished earlier ranked higher).
    std::stable_sort(out[b].begin(), out[b].end(),
                     [](const BeamResult& x, const BeamResult& y) { return x.score > y.score; });
  }
  return out;
}

std::vector<BeamResult> beam_search(const Ensemble& models, const Batch& batch,
                                    const BeamOptions& options) {
  std::vector<BeamResult> out;
  for (std::vector<BeamResult>& nbest : beam_search_nbest(models, batch, options))
    out.push_back(std::move(nbest.front()));
  return out;
}

std::vector<BeamResult> beam_search(Transformer<float>& model, const Batch& batch,
                                    const BeamOptions& options) {
  return beam_search(Ensemble{&model}, batch, options);
}

std::vector<std::vector<int32_t>> beam_decode(const Ensemble& models, const Batch& batch,
                                              const BeamOptions& options) {
  std::vector<std::vector<int32_t>> out;
  for (BeamResult& r : beam_search(models, batch, options)) out.push_back(std::move(r.tokens));
  return out;
}

std::vector<std::vector<int32_t>> beam_decode(Transformer<float>& model, const Batch& batch,
                                              const BeamOptions& options) {
  return beam_decode(Ensemble{&model}, batch, options);
}

}  // namespace scalelab
