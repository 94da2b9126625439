// report/ledger_files: the typed contents of a `scalelab check` output directory.
//
// The report reads only JSON (docs/ledger.md is the contract), never the ledger's C++ types, so
// that it can render a directory written by any version of `check` that speaks schema 1. Every
// field is checked on reading; an error names the file, the field and the offending value.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "scalelab/core/config_section.hpp"  // scalelab::Json

namespace scalelab::report {

enum class Verdict { holds, holds_only_if, does_not_hold, not_testable };
// The verdict as docs/ledger.md spells it ("holds only if", ...).
const char* verdict_text(Verdict v);

struct KeyNumber {
  std::string label;
  std::optional<double> value;
  std::string unit;
  std::string text;  // the ledger's own rendering of value and unit; may be empty
};

struct Arm {
  std::string name;
  std::string kind;  // train | probe | compute
  Json config;       // the resolved run config
  std::vector<int64_t> seeds;
};

struct Measurement {
  std::string name;
  std::string arm;
  std::string x;  // the swept value as shown: a number, a label, or "L 16, d 64" for several; "" if none
  std::string unit;
  std::vector<double> values;  // per seed; NaN where the JSON holds null
  int64_t failed = 0;          // seeds whose run failed (null values ranked as the worst)
  double median = 0, min = 0, max = 0;
};

struct Series {
  std::string label;
  std::vector<std::vector<double>> points;  // [x, y] or [x, y, lo, hi]
};

struct PlotSpec {
  std::string id;
  std::string title;
  std::string kind;  // lines | bars | heatmap
  std::string x_label, y_label;
  bool log_x = false, log_y = false;
  std::vector<Series> series;
  std::vector<std::string> rows, cols;
  std::vector<std::vector<double>> matrix;
  // A shaded horizontal band [lo, hi] behind the data (a criterion's "matched" range), with its
  // name in the key; drawn by the report only (not read from claim files).
  std::optional<std::pair<double, double>> y_band;
  std::string y_band_label;
};

// One judged clause of a claim (docs/ledger.md, rule 2).
struct PartRecord {
  std::string name, statement;
  Verdict verdict = Verdict::not_testable;
  std::string condition, reason, sentence;
};

// The claim evaluated with every tuned arm at the ledger's shared learning rate.
struct SensitivityRecord {
  Verdict verdict = Verdict::not_testable;
  std::string condition, reason, sentence;
  KeyNumber key_number;
};

struct ClaimRecord {
  std::string file;  // where it was read from, for messages
  std::string id;
  std::string group;
  std::string statement;
  std::string experiment;
  std::string criterion;
  Json thresholds = Json::object();
  std::string mode;
  std::vector<Arm> arms;
  std::vector<Measurement> measurements;
  std::vector<PlotSpec> plots;
  Json facts = Json::object();  // name -> number (or string)
  Verdict verdict = Verdict::not_testable;
  std::string condition;
  std::string reason;
  bool provisional = false;
  // Marginal: moving every seed by its own spread changes the verdict (to marginal_reads).
  bool marginal = false;
  std::string marginal_reads;
  std::string sentence;
  KeyNumber key_number;
  std::optional<double> seconds;
  std::vector<PartRecord> parts;                // empty for a claim judged as one
  std::optional<SensitivityRecord> sensitivity;  // training claims with tuned arms
};

struct LedgerEntry {  // one claim's summary record in ledger.json
  std::string id;
  Verdict verdict = Verdict::not_testable;
  std::string condition;
  bool provisional = false;
  KeyNumber key_number;
};

struct Ledger {
  std::string dir;
  std::string mode;
  std::string version;
  std::string cpu;
  std::optional<double> seconds;
  // Optional extras some versions of check write (shown when present).
  std::optional<double> runs, cached_runs, train_seeds, init_seeds;
  std::vector<LedgerEntry> entries;          // in ledger.json's order
  std::map<std::string, ClaimRecord> claims;  // by id, from claims/<ID>.json
};

// A finite number of a claim's facts or thresholds by name; nullopt when the claim is not in the
// ledger, the name is absent, or its value is not a finite number.
std::optional<double> fact_number(const Ledger& ledger, const std::string& id, const std::string& name);
std::optional<double> threshold_number(const Ledger& ledger, const std::string& id, const std::string& name);

// Reads DIR/ledger.json alone: its metadata and summary entries (`claims` stays empty). Throws
// Error when DIR or its ledger.json is missing or ledger.json does not follow schema 1.
Ledger read_ledger_summary(const std::string& dir);

// Reads DIR/ledger.json and DIR/claims/<ID>.json for every claim it lists. Throws Error when
// ledger.json is missing or any file does not follow schema 1.
Ledger read_ledger(const std::string& dir);

// One claim file; exposed for tests.
ClaimRecord read_claim(const std::string& path);

}  // namespace scalelab::report
