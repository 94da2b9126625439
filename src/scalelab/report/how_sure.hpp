// report/how_sure: how firm a verdict is, in one word a reader can scan, with what it rests on.
//
//   provisional  quick mode: small models and grids
//   open         not testable here (the seeds disagree, or nothing could be measured)
//   marginal     moving every seed by its own spread changes the verdict (ledger rule: robustness)
//   firm         none of the above
//
// Beside the word, the figures it rests on, each read from the claim record: seeds per arm,
// failed seeds, the seeds' spread of the key number, and the key number's distance to the
// threshold it is judged against. A figure the record cannot give is absent (nullopt), never
// guessed; docs/ledger.md ("The report") says which claims have none and why.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "scalelab/report/document.hpp"
#include "scalelab/report/ledger_files.hpp"

namespace scalelab::report {

struct HowSure {
  std::string word;     // provisional | open | marginal | firm
  int64_t seeds = 0;    // seeds per arm (the most any arm used)
  int64_t failed = 0;   // failed seeds in the claim's measurements (the most of any measurement)
};

HowSure how_sure(const ClaimRecord& c);

// The word as a badge (coloured in HTML, [word] in Markdown).
Span how_sure_badge(const HowSure& h);

// "8 seeds per arm, none failed; marginal: a seed shift reads “does not hold”".
std::string how_sure_detail(const ClaimRecord& c, const HowSure& h);

// The seeds' spread (max − min over seeds, in the key number's unit) of the measurement the key
// number is the median of. nullopt when the key number has no value, no measurement of two or
// more seeds has it as its median (a ratio of two arms' medians, a closed form, one value), a
// seed failed (the spread is then unbounded), or several measurements have it and their spreads
// differ (the key number's label names the swept value that picks one when it can).
std::optional<double> key_number_spread(const ClaimRecord& c);

// The threshold a built-in claim's key number is judged against, by name in the claim's
// `thresholds` ("matched_factor" for E4); "" when the key number is not compared with one of them
// directly (E1, A1: a Monte Carlo ratio judged in standard errors; E5: an exponent judged within a
// tolerance of its expected value; A5: a range; E7: a difference judged against minus the
// margin; E6, A9, A12: no threshold) and for claims of a claim file.
const char* key_threshold_name(const std::string& claim_id);

// x rounded to `digits` significant digits, as format_number writes it ("0.151", "1.12e-5").
std::string significant(double x, int digits);

struct ThresholdMargin {
  double key = 0, threshold = 0;
  std::string text;  // "4.5 % below 4", "17 % above 1.5", "0.065× 1e-5", "1200× 0.001"
};
// The key number against its threshold: the difference relative to the threshold in percent when
// the key number is within [0, 2] times it, else the ratio. nullopt when key_threshold_name is ""
// or the record lacks a finite key number or a finite, non-zero threshold of that name.
std::optional<ThresholdMargin> threshold_margin(const ClaimRecord& c);

}  // namespace scalelab::report
