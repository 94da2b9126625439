#include "scalelab/probes/record.hpp"

#include <cmath>
#include <istream>
#include <ostream>

#include "scalelab/core/error.hpp"

namespace scalelab::probes {

double ProbeRecord::value(const std::string& name) const {
  auto it = values.find(name);
  return it == values.end() ? std::nan("") : it->second;
}

ProbeRecord probe_record(std::string probe, std::string stack, int64_t layer, std::string site,
                         int64_t seed, int64_t step, int64_t head) {
  ProbeRecord r;
  r.probe = std::move(probe);
  r.stack = std::move(stack);
  r.layer = layer;
  r.site = std::move(site);
  r.head = head;
  r.seed = seed;
  r.step = step;
  return r;
}

Json record_to_json(const ProbeRecord& r) {
  Json values = Json::object();
  for (const auto& [k, v] : r.values) values[k] = std::isfinite(v) ? Json(v) : Json(nullptr);
  Json j = {{"schema", kRecordSchema}, {"probe", r.probe}, {"stack", r.stack},
            {"layer", r.layer},        {"site", r.site},   {"head", r.head},
            {"seed", r.seed},          {"step", r.step},   {"values", std::move(values)}};
  if (!r.histograms.empty()) {
    Json h = Json::object();
    for (const auto& [k, hist] : r.histograms) h[k] = hist.to_json();
    j["histograms"] = std::move(h);
  }
  if (!r.tags.empty()) j["tags"] = r.tags;
  return j;
}

namespace {
template <class V>
V field(const Json& j, const char* name) {
  SL_CHECK(j.contains(name), "probe record: missing field \"", name, "\" in ", j.dump());
  try {
    return j.at(name).get<V>();
  } catch (const Json::exception&) {
    throw_error("probe record: field \"", name, "\" has the wrong type: ", j.at(name).dump());
  }
}
}  // namespace

ProbeRecord record_from_json(const Json& j) {
  SL_CHECK(j.is_object(), "probe record: expected a JSON object, got ", j.dump());
  const int schema = field<int>(j, "schema");
  SL_CHECK(schema == kRecordSchema, "probe record: schema ", schema, " is not supported (this "
           "build reads schema ", kRecordSchema, ")");
  ProbeRecord r;
  r.probe = field<std::string>(j, "probe");
  r.stack = field<std::string>(j, "stack");
  r.layer = field<int64_t>(j, "layer");
  r.site = field<std::string>(j, "site");
  r.head = field<int64_t>(j, "head");
  r.seed = field<int64_t>(j, "seed");
  r.step = field<int64_t>(j, "step");
  const Json values = field<Json>(j, "values");
  SL_CHECK(values.is_object(), "probe record: \"values\" must be an object: ", values.dump());
  for (const auto& [k, v] : values.items()) {
    SL_CHECK(v.is_null() || v.is_number(), "probe record: value \"", k, "\" = ", v.dump(),
             " is not a number or null");
    r.values[k] = v.is_null() ? std::nan("") : v.get<double>();
  }
  if (j.contains("histograms"))
    for (const auto& [k, h] : j.at("histograms").items()) r.histograms[k] = Histogram::from_json(h);
  if (j.contains("tags")) r.tags = j.at("tags").get<std::map<std::string, std::string>>();
  return r;
}

void write_jsonl(std::ostream& out, const std::vector<ProbeRecord>& records) {
  for (const ProbeRecord& r : records) out << record_to_json(r).dump() << "\n";
}

std::vector<ProbeRecord> read_jsonl(std::istream& in, const std::string& source) {
  std::vector<ProbeRecord> out;
  std::string line;
  for (int64_t n = 1; std::getline(in, line); ++n) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    try {
      out.push_back(record_from_json(Json::parse(line)));
    } catch (const Json::exception& e) {
      throw_error(source, ":", n, ": not JSON: ", e.what());
    } catch (const Error& e) {
      throw_error(source, ":", n, ": ", e.what());
    }
  }
  return out;
}

bool RecordFilter::matches(const ProbeRecord& r) const {
  return (!probe || *probe == r.probe) && (!stack || *stack == r.stack) &&
         (!site || *site == r.site) && (!layer || *layer == r.layer) &&
         (!head || *head == r.head) && (!seed || *seed == r.seed) && (!step || *step == r.step);
}

std::vector<double> field_values(const std::vector<ProbeRecord>& records, const RecordFilter& f,
                                 const std::string& name) {
  std::vector<double> out;
  for (const ProbeRecord& r : records)
    if (f.matches(r)) out.push_back(r.value(name));
  return out;
}

Histogram histogram_of(const std::vector<ProbeRecord>& records, const RecordFilter& f,
                       const std::string& name, const std::vector<double>& edges,
                       int64_t quantile_bins) {
  const std::vector<double> v = field_values(records, f, name);
  SL_CHECK(!v.empty(), "histogram: no probe record matches (field \"", name, "\")");
  Histogram h(edges.empty() ? quantile_edges(v, quantile_bins) : edges);
  for (double x : v) h.add(x);
  return h;
}

}  // namespace scalelab::probes
