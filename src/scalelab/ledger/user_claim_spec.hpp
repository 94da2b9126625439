// ledger/user_claim_spec: a claim file's claim as read and validated (user_claims.cpp), and what
// turns it into a Claim (user_claim_compile.cpp): the runs of its arms and how they are judged.
// Internal to those two files.
#pragma once
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "scalelab/core/error.hpp"
#include "scalelab/ledger/claim.hpp"
#include "scalelab/ledger/user_measures.hpp"

namespace scalelab::ledger::user_claim_detail {

struct ArmSpec {
  std::string name;
  std::vector<std::string> set;
};
// One swept quantity: `key` (a config key set to each value) and/or per-value overrides `set`
// that realise the value (several keys moving together, e.g. n_heads for a d_k); `name` labels
// the cases ("d_k = 2"). A value in `context` is run and recorded but is not a case of the verdict.
struct SweepSpec {
  std::string key, name;
  std::vector<Json> values;
  std::vector<std::vector<std::string>> set;  // empty, or one list of overrides per value
  std::vector<bool> context;                  // per value
};
struct CriterionSpec {
  std::vector<std::string> arms;  // the arms under test, each judged against `than`
  std::string kind, than, at = "every";
  std::string text;  // the criterion in the file's own words ("": generated from the above)
  double margin = 0, tolerance = 0.02, threshold = NAN;
};
struct ClaimSpec {
  std::string file, id, group, statement;
  std::string experiment;  // the experiment in the file's own words ("": generated)
  // The base tree before any override; without base.config, the ledger's own training tree of the
  // mode the claim is planned in (ledger_base), so a built-in claim file serves both modes.
  Json tree;
  bool ledger_base = false;
  std::vector<std::string> set;  // base overrides (steps included)
  std::vector<ArmSpec> arms;
  std::optional<SweepSpec> sweep;
  int64_t seeds = 3;
  bool seeds_from_mode = false;  // no `seeds` key: the mode's training seeds (--seeds)
  MeasureSpec measure;
  CriterionSpec criterion;
};

inline const std::vector<std::string> kCriteria = {"better", "worse", "equivalent", "ratio_at_least", "diverges"};

inline std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

// Reads one claim file's values with errors that name the file, the claim and the key.
class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}
  void set_claim(const std::string& id) { claim_ = id; }

  [[noreturn]] void fail(const std::string& key, const std::string& problem) const {
    throw_error(file_, (claim_.empty() ? "" : ": claim \"" + claim_ + "\""), ": ", key, ": ", problem);
  }
  void only_keys(const Json& table, const std::string& where, const std::vector<std::string>& allowed) const {
    if (!table.is_object()) fail(where, "expected a table");
    for (const auto& [k, v] : table.items())
      if (std::find(allowed.begin(), allowed.end(), k) == allowed.end())
        fail(where.empty() ? k : where + "." + k, "unknown key; allowed: " + joined(allowed));
  }
  std::string text(const Json& t, const std::string& key, const std::string& where, bool required,
                   const std::string& fallback = "") const {
    if (!t.contains(key)) {
      if (required) fail(where + key, "missing (a string is required)");
      return fallback;
    }
    if (!t[key].is_string()) fail(where + key, value_text(t[key]) + ": expected a string");
    return t[key].get<std::string>();
  }
  double number(const Json& t, const std::string& key, const std::string& where, double fallback) const {
    if (!t.contains(key)) return fallback;
    if (!t[key].is_number() || !std::isfinite(t[key].get<double>()))
      fail(where + key, value_text(t[key]) + ": expected a finite number");
    return t[key].get<double>();
  }
  int64_t integer(const Json& t, const std::string& key, const std::string& where, int64_t fallback,
                  int64_t lo, int64_t hi) const {
    if (!t.contains(key)) return fallback;
    const Json& v = t[key];
    if (!v.is_number_integer() || v.get<int64_t>() < lo || v.get<int64_t>() > hi)
      fail(where + key, value_text(v) + ": expected an integer in " + std::to_string(lo) + ".." + std::to_string(hi));
    return v.get<int64_t>();
  }
  std::vector<std::string> strings(const Json& t, const std::string& key, const std::string& where) const {
    std::vector<std::string> out;
    if (!t.contains(key)) return out;
    if (!t[key].is_array()) fail(where + key, "expected an array of \"section.key=value\" strings");
    for (const Json& s : t[key]) {
      if (!s.is_string()) fail(where + key, value_text(s) + ": expected a \"section.key=value\" string");
      out.push_back(s.get<std::string>());
    }
    return out;
  }
  const std::string& file() const { return file_; }

 private:
  std::string file_, claim_;
};

inline std::string override_of(const std::string& key, const Json& value) { return key + "=" + value_text(value); }
inline std::string case_name(const SweepSpec& s, const Json& value) {
  return s.name + " = " + (value.is_string() ? value.get<std::string>() : value_text(value));
}

// The sweep sets train.lr (its key, or an override of a value): the rate is then the subject.
inline bool sweeps_learning_rate(const std::optional<SweepSpec>& s) {
  if (!s) return false;
  if (s->key == "train.lr") return true;
  for (const std::vector<std::string>& with : s->set)
    for (const std::string& o : with)
      if (o.rfind("train.lr=", 0) == 0) return true;
  return false;
}

// The index of a sweep value among the sweep's values (they are distinct).
size_t sweep_index(const SweepSpec& sweep, const Json& value);

// The spec as planned in `mode`: the ledger's training tree and seeds of that mode where the file
// leaves them to the ledger.
ClaimSpec in_mode(const ClaimSpec& s, const LedgerMode& mode);

// The resolved config of an arm at a sweep value plus `extra` overrides (a rejected override is an
// error naming the arm, the sweep value and `what`).
Json arm_at(const Reader& r, const ClaimSpec& s, const ArmSpec& arm, const Json* value,
            const std::vector<std::string>& extra = {}, const std::string& what = "");

// The runs of one arm at one sweep value: one group, or for coord_check one per width.
struct ArmRuns {
  std::string name;
  Json config;
};
std::vector<ArmRuns> arm_runs(const Reader& r, const ClaimSpec& s, const ArmSpec& arm, const Json* value);

// The Claim: its plan (runs) and its evaluation (cases, verdict, record).
Claim compile(const ClaimSpec& s);

}  // namespace scalelab::ledger::user_claim_detail
