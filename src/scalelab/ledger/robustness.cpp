#include "scalelab/ledger/robustness.hpp"

namespace scalelab::ledger {
namespace {

bool same(const Verdict& a, const Verdict& b) { return a.kind == b.kind && a.condition == b.condition; }

std::string reads(const Verdict& v) {
  return "\"" + std::string(verdict_name(v.kind)) + (v.condition.empty() ? "" : " " + v.condition) + "\"";
}

Json verdict_json(const Verdict& v) {
  return {{"verdict", verdict_name(v.kind)}, {"condition", v.condition}, {"reason", v.reason}};
}

}  // namespace

Robustness under_seed_noise(const Claim& claim, const ClaimRun& unevaluated, const Verdict& verdict,
                            bool any_marginal_decision) {
  if (!any_marginal_decision) return Robustness{verdict, verdict, verdict, false};
  auto evaluate_moved = [&](int direction) {
    ClaimRun copy = unevaluated;
    const SeedShift shift(direction);
    return copy.checked_for_lr_edges(claim.evaluate(copy));
  };
  Robustness r;
  r.moved_down = evaluate_moved(-1);
  r.moved_up = evaluate_moved(+1);
  r.original = verdict;
  r.flips = !same(r.moved_down, verdict) || !same(r.moved_up, verdict);
  return r;
}

Json Robustness::to_json() const {
  return {{"what", "the claim evaluated again with every per-seed value moved by its seeds' own spread (max - min), "
                   "down and up"},
          {"moved_down", verdict_json(moved_down)}, {"moved_up", verdict_json(moved_up)}, {"flips", flips}};
}

std::string Robustness::sentence() const {
  if (!flips) return "";
  const bool down = !same(moved_down, original), up = !same(moved_up, original);
  if (down && up && same(moved_down, moved_up))
    return " Marginal: with every seed moved down or up by its own spread, it reads " + reads(moved_down) + ".";
  std::string s = " Marginal: with every seed moved";
  if (down) s += " down by its own spread, it reads " + reads(moved_down);
  if (down && up) s += "; moved";
  if (up) s += " up by its own spread, it reads " + reads(moved_up);
  return s + ".";
}

}  // namespace scalelab::ledger
