// Probe records: the JSON Lines form round-trips (NaN as null), bad lines name their line, the
// filter selects, and a field histograms over records with fixed or quantile bins; the summary
// over seeds gives median, min and max.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "scalelab/core/error.hpp"
#include "scalelab/probes/record.hpp"
#include "scalelab/probes/summary.hpp"

namespace scalelab::probes {
namespace {

ProbeRecord rec(const std::string& probe, int64_t layer, int64_t head, int64_t seed, double v) {
  ProbeRecord r;
  r.probe = probe;
  r.stack = "encoder";
  r.layer = layer;
  r.site = "self_attn";
  r.head = head;
  r.seed = seed;
  r.values["var"] = v;
  return r;
}

TEST(ProbeRecord, JsonLinesRoundTripWithNullForNonFinite) {
  ProbeRecord r = rec("attn_logits", 2, 3, 7, 1.25);
  r.step = 5;
  r.values["ratio"] = std::nan("");
  r.values["headroom"] = INFINITY;
  r.histograms["values"] = Histogram::uniform(-1, 1, 2);
  r.histograms["values"].add(0.5);
  r.tags["preset"] = "vaswani2017";
  const Json j = record_to_json(r);
  EXPECT_EQ(j.at("schema"), 1);
  EXPECT_TRUE(j.at("values").at("ratio").is_null());
  EXPECT_TRUE(j.at("values").at("headroom").is_null());
  std::stringstream io;
  write_jsonl(io, {r, rec("attn_softmax", 0, -1, 1, 0.5)});
  const std::string text = io.str();
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 2);
  const std::vector<ProbeRecord> back = read_jsonl(io, "mem");
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[0].probe, "attn_logits");
  EXPECT_EQ(back[0].stack, "encoder");
  EXPECT_EQ(back[0].layer, 2);
  EXPECT_EQ(back[0].site, "self_attn");
  EXPECT_EQ(back[0].head, 3);
  EXPECT_EQ(back[0].seed, 7);
  EXPECT_EQ(back[0].step, 5);
  EXPECT_EQ(back[0].value("var"), 1.25);
  EXPECT_TRUE(std::isnan(back[0].value("ratio")));
  EXPECT_TRUE(std::isnan(back[0].value("absent")));
  EXPECT_EQ(back[0].histograms.at("values").counts(), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(back[0].tags.at("preset"), "vaswani2017");
}

TEST(ProbeRecord, BadLinesNameTheSourceAndLine) {
  std::stringstream io("\n{\"schema\":1}\n");
  try {
    read_jsonl(io, "p.jsonl");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("p.jsonl:2: probe record: missing field \"probe\""),
              std::string::npos) << e.what();
  }
  std::stringstream junk("{not json\n");
  EXPECT_THROW(read_jsonl(junk, "q"), Error);
  std::stringstream future(R"({"schema":2,"probe":"x"})");
  EXPECT_THROW(read_jsonl(future, "q"), Error);
}

TEST(ProbeRecord, FilterAndHistogramOverRecords) {
  std::vector<ProbeRecord> rs;
  for (int layer = 0; layer < 4; ++layer)
    for (int head = 0; head < 5; ++head) rs.push_back(rec("attn_logits", layer, head, 1, layer * 5 + head));
  rs.push_back(rec("attn_softmax", 0, 0, 1, 100));
  RecordFilter f;
  f.probe = "attn_logits";
  EXPECT_EQ(field_values(rs, f, "var").size(), 20u);
  f.layer = 1;
  EXPECT_EQ(field_values(rs, f, "var"), (std::vector<double>{5, 6, 7, 8, 9}));
  f.layer.reset();
  const Histogram fixed = histogram_of(rs, f, "var", {0, 10, 20});
  EXPECT_EQ(fixed.counts(), (std::vector<int64_t>{10, 10}));
  const Histogram q = histogram_of(rs, f, "var", {}, 4);
  EXPECT_EQ(q.counts(), (std::vector<int64_t>{5, 5, 5, 5}));
  f.probe = "nothing";
  EXPECT_THROW(histogram_of(rs, f, "var", {0, 1}), Error);
}

TEST(SeedSummary, MedianMinMaxOverSeedsIgnoringNaN) {
  std::vector<ProbeRecord> rs{rec("attn_logits", 0, -1, 1, 3.0), rec("attn_logits", 0, -1, 2, 1.0),
                              rec("attn_logits", 0, -1, 3, 2.0), rec("attn_logits", 0, -1, 4, 10.0),
                              rec("attn_logits", 1, -1, 1, std::nan(""))};
  const SeedSummary s(rs);
  const SeedSpread* a = s.find("attn_logits", "encoder", 0, "self_attn", -1, "var");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->seeds, (std::vector<int64_t>{1, 2, 3, 4}));
  EXPECT_DOUBLE_EQ(a->median, 2.5);
  EXPECT_EQ(a->min, 1.0);
  EXPECT_EQ(a->max, 10.0);
  const SeedSpread* b = s.find("attn_logits", "encoder", 1, "self_attn", -1, "var");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->finite_seeds, 0);
  EXPECT_TRUE(std::isnan(b->median));
  EXPECT_EQ(s.find("attn_logits", "decoder", 0, "self_attn", -1, "var"), nullptr);
  EXPECT_EQ(s.sites("attn_logits").size(), 2u);
  EXPECT_TRUE(s.to_json().at("groups")[1].at("median").is_null());
  EXPECT_DOUBLE_EQ(median_of({5, 1, 3}), 3.0);
}

}  // namespace
}  // namespace scalelab::probes
