// probes/record: one probe sample, its JSON Lines form, and selection/histogramming of samples.
//
// A sample is keyed by (probe, stack, layer, site, head, seed, step) and carries named numbers
// (and optionally named histograms). The field names are a stable interface consumed by the claims
// ledger; docs/probes.md lists every probe and its values.
//
//   {"schema":1,"probe":"attn_softmax","stack":"encoder","layer":0,"site":"self_attn","head":-1,
//    "seed":1,"step":0,"values":{"entropy_norm_mean":0.93,...},"histograms":{...},"tags":{...}}
//
// layer = -1: not a layer (the stack's input, the output, a whole-model figure); head = -1: all
// heads together (or not an attention probe). NaN and ±inf values are written as null and read
// back as NaN. "histograms" and "tags" are omitted when empty.
#pragma once
#include <cstdint>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "scalelab/probes/histogram.hpp"

namespace scalelab::probes {

inline constexpr int kRecordSchema = 1;

struct ProbeRecord {
  std::string probe;
  std::string stack = "model";  // "encoder" | "decoder" | "model"
  int64_t layer = -1;
  std::string site;             // where in the layer (docs/probes.md), "" if none
  int64_t head = -1;
  int64_t seed = 0;
  int64_t step = 0;
  std::map<std::string, double> values;
  std::map<std::string, Histogram> histograms;
  std::map<std::string, std::string> tags;  // free labels from the caller (e.g. the preset)

  double value(const std::string& name) const;  // NaN if absent
};

// A record with its key set (values, histograms and tags left to the caller).
ProbeRecord probe_record(std::string probe, std::string stack, int64_t layer, std::string site,
                         int64_t seed, int64_t step, int64_t head = -1);

Json record_to_json(const ProbeRecord& record);
// Throws Error naming the missing or mistyped field.
ProbeRecord record_from_json(const Json& j);

void write_jsonl(std::ostream& out, const std::vector<ProbeRecord>& records);
// `source` names the stream in error messages (e.g. the file name), with the line number.
std::vector<ProbeRecord> read_jsonl(std::istream& in, const std::string& source);

// Selects records; unset fields match anything.
struct RecordFilter {
  std::optional<std::string> probe, stack, site;
  std::optional<int64_t> layer, head, seed, step;
  bool matches(const ProbeRecord& r) const;
};

// The named value of every matching record (NaN where absent), in record order.
std::vector<double> field_values(const std::vector<ProbeRecord>& records, const RecordFilter& f,
                                 const std::string& field);
// Histogram of that field over the matching records: fixed edges, or `quantile_bins` equal-count
// bins when edges is empty.
Histogram histogram_of(const std::vector<ProbeRecord>& records, const RecordFilter& f,
                       const std::string& field, const std::vector<double>& edges,
                       int64_t quantile_bins = 10);

}  // namespace scalelab::probes
