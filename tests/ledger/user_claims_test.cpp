// User claim files (docs/claims-file.md): each verdict kind from real runs at initialisation (the
// quick copy task's model, probe arms: seconds), and every bad-file case as one Error line naming
// the file, the claim and the key, with nothing written.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "scalelab/core/error.hpp"
#include "scalelab/ledger/check.hpp"
#include "scalelab/ledger/user_claims.hpp"

namespace fs = std::filesystem;
using namespace scalelab;
using namespace scalelab::ledger;

namespace {

class UserClaims : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("scalelab-user-claims-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write(const std::string& name, const std::string& text) {
    const fs::path p = dir_ / name;
    std::ofstream(p) << text;
    return p.string();
  }
  // Runs the file's claims (only them) in quick mode; returns ledger.json's claims by id.
  std::map<std::string, Json> check(const std::string& file, const std::vector<std::string>& ids) {
    CheckOptions o;
    o.quick = true;
    o.only = ids;
    o.claim_files = {file};
    o.out = (dir_ / "out").string();
    o.jobs = 2;
    std::map<std::string, Json> by_id;
    const CheckResult r = run_check(o);
    for (const Json& c : r.ledger["claims"]) by_id[c["id"].get<std::string>()] = c;
    return by_id;
  }
  // The error of loading `text` as a claim file (empty if it loads).
  std::string error_of(const std::string& text) {
    const std::string file = write("bad.toml", text);
    try {
      LedgerMode mode;
      mode.quick = true;
      load_claim_files({file}, mode);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  }
  fs::path dir_;
};

// The maximum |attention logit| at init of the first encoder self-attention: 1/d_k gives logits
// sqrt(d_k) = 4 times smaller than 1/sqrt(d_k) at the quick model's d_k 16; no scale sqrt(d_k)
// times larger. Arms in a claim share seeds, so the comparison is paired.
const char* kProbeClaims = R"TOML(
[[claim]]
id = "inv-dk-smaller-logits"
statement = "1/d_k gives smaller attention logits at init than 1/sqrt(d_k)."
seeds = 3
arms = [ { name = "1/d_k", set = ["model.attention.scale=inv_dk"] }, { name = "1/sqrt(d_k)" } ]
measure = { name = "probe", probe = "attn_logits", field = "max_abs" }
criterion = { kind = "better", arm = "1/d_k", than = "1/sqrt(d_k)" }

[[claim]]
id = "inv-dk-larger-logits"
statement = "1/d_k gives larger attention logits at init than 1/sqrt(d_k)."
seeds = 3
arms = [ { name = "1/d_k", set = ["model.attention.scale=inv_dk"] }, { name = "1/sqrt(d_k)" } ]
measure = { name = "probe", probe = "attn_logits", field = "max_abs" }
criterion = { kind = "worse", arm = "1/d_k", than = "1/sqrt(d_k)" }

[[claim]]
id = "no-scale-doubles-logits"
statement = "Without the scale the attention logits at init are at least twice as large."
seeds = 3
base.set = ["model.d_model=32"]
arms = [ { name = "none", set = ["model.attention.scale=none"] }, { name = "1/sqrt(d_k)" } ]
sweep = { key = "model.n_heads", values = [1, 32] }
measure = { name = "probe", probe = "attn_logits", field = "max_abs" }
criterion = { kind = "ratio_at_least", arm = "none", than = "1/sqrt(d_k)", threshold = 2.0 }

[[claim]]
id = "no-scale-doubles-logits-somewhere"
statement = "At some head count the attention logits at init are at least twice as large without the scale."
seeds = 3
base.set = ["model.d_model=32"]
arms = [ { name = "none", set = ["model.attention.scale=none"] }, { name = "1/sqrt(d_k)" } ]
sweep = { key = "model.n_heads", values = [1, 32] }
measure = { name = "probe", probe = "attn_logits", field = "max_abs" }
criterion = { kind = "ratio_at_least", arm = "none", than = "1/sqrt(d_k)", threshold = 2.0, at = "some" }
)TOML";

}  // namespace

TEST_F(UserClaims, VerdictsFromRealRuns) {
  const std::string file = write("claims.toml", kProbeClaims);
  const auto c = check(file, {"inv-dk-smaller-logits", "inv-dk-larger-logits", "no-scale-doubles-logits",
                              "no-scale-doubles-logits-somewhere"});
  ASSERT_EQ(c.size(), 4u);
  EXPECT_EQ(c.at("inv-dk-smaller-logits")["verdict"], "holds");
  EXPECT_EQ(c.at("inv-dk-larger-logits")["verdict"], "does not hold");
  // d_k = 32 (one head): ratio sqrt(32) = 5.7; d_k = 1 (32 heads): the scale is 1, ratio 1.
  EXPECT_EQ(c.at("no-scale-doubles-logits")["verdict"], "holds only if");
  EXPECT_EQ(c.at("no-scale-doubles-logits")["condition"], "model.n_heads = 1");
  EXPECT_EQ(c.at("no-scale-doubles-logits-somewhere")["verdict"], "holds");
  // The record holds the measured cases and a plot of the measure against the sweep per arm.
  std::ifstream in(dir_ / "out" / "claims" / "no-scale-doubles-logits.json");
  const Json record = Json::parse(in);
  EXPECT_EQ(record["cases"]["held_on"], Json::array({"model.n_heads = 1"}));
  EXPECT_EQ(record["cases"]["failed_on"], Json::array({"model.n_heads = 32"}));
  ASSERT_FALSE(record["plots"].empty());
  EXPECT_EQ(record["plots"][0]["series"].size(), 2u);
}

// A sweep of a quantity that is no config key: d_k, realised per value by n_heads (d_model 32),
// named in the cases; d_k 1 as context is measured and recorded but not judged. At d_k 32 no scale
// gives logits sqrt(32) = 5.7 times larger, at d_k 1 the same (the scale is 1).
TEST_F(UserClaims, NamedSweepWithOverridesPerValueAndContext) {
  const std::string claim = R"TOML(
[[claim]]
id = "ID"
statement = "Without the scale the attention logits at init are at least twice as large."
experiment = "d_model 32 with 1 head (d_k 32) or 32 heads (d_k 1), probe at init."
seeds = 3
base.set = ["model.d_model=32"]
arms = [ { name = "none", set = ["model.attention.scale=none"] }, { name = "1/sqrt(d_k)" } ]
sweep = { name = "d_k", values = [32, 1], set = [["model.n_heads=1"], ["model.n_heads=32"]]CONTEXT }
measure = { name = "probe", probe = "attn_logits", field = "max_abs" }
criterion = { kind = "ratio_at_least", arm = "none", than = "1/sqrt(d_k)", threshold = 2.0, text = "Ratio >= 2 at d_k 32." }
)TOML";
  auto with = [&](const std::string& id, const std::string& context) {
    std::string t = claim;
    t.replace(t.find("ID"), 2, id);
    t.replace(t.find("CONTEXT"), 7, context);
    return t;
  };
  const std::string file = write("dk.toml", with("judged", "") + with("with-context", ", context = [1]"));
  const auto c = check(file, {"judged", "with-context"});
  EXPECT_EQ(c.at("judged")["verdict"], "holds only if");
  EXPECT_EQ(c.at("judged")["condition"], "d_k = 32");
  EXPECT_EQ(c.at("with-context")["verdict"], "holds");
  std::ifstream in(dir_ / "out" / "claims" / "with-context.json");
  const Json record = Json::parse(in);
  EXPECT_EQ(record["cases"]["tested"], Json::array({"d_k = 32"}));
  EXPECT_EQ(record["experiment"], "d_model 32 with 1 head (d_k 32) or 32 heads (d_k 1), probe at init.");
  EXPECT_EQ(record["criterion"], "Ratio >= 2 at d_k 32.");
  EXPECT_EQ(record["thresholds"]["threshold"], 2.0);
  // One judged case: its paired ratio is the key number, about sqrt(32).
  ASSERT_TRUE(record["key_number"].is_object()) << record["key_number"].dump();
  EXPECT_NEAR(record["key_number"]["value"].get<double>(), std::sqrt(32.0), 0.5);
  // The context value is measured like the judged one: each arm and the paired ratio at d_k 1.
  int at_context = 0;
  for (const Json& m : record["measurements"]) at_context += m["x"] == 1 ? 1 : 0;
  EXPECT_EQ(at_context, 3);  // 2 arms + paired
  // The runs are the arms' configs with the value's overrides: n_heads 1 at d_k 32.
  for (const Json& a : record["arms"])
    if (a["name"] == "none, d_k = 32") EXPECT_EQ(a["config"]["model"]["n_heads"], 1);
}

// Arms are conditions: with two arms under test, each is a case, and a claim true of one arm only
// holds only if that arm. At init 1/d_k gives logits 4x smaller than 1/sqrt(d_k) (d_k 16), no
// scale 4x larger.
TEST_F(UserClaims, ClaimTrueOnOneArmHoldsOnlyIfThatArm) {
  const std::string file = write("arms.toml", R"TOML(
[[claim]]
id = "smaller-logits"
statement = "Both 1/d_k and no scale give smaller attention logits at init than 1/sqrt(d_k)."
seeds = 3
arms = [ { name = "1/d_k", set = ["model.attention.scale=inv_dk"] },
         { name = "none", set = ["model.attention.scale=none"] }, { name = "1/sqrt(d_k)" } ]
measure = { name = "probe", probe = "attn_logits", field = "max_abs" }
criterion = { kind = "better", arm = ["1/d_k", "none"], than = "1/sqrt(d_k)" }
)TOML");
  const auto c = check(file, {"smaller-logits"});
  EXPECT_EQ(c.at("smaller-logits")["verdict"], "holds only if");
  EXPECT_EQ(c.at("smaller-logits")["condition"], "1/d_k");
  std::ifstream in(dir_ / "out" / "claims" / "smaller-logits.json");
  const Json record = Json::parse(in);
  EXPECT_EQ(record["cases"]["held_on"], Json::array({"1/d_k"}));
  EXPECT_EQ(record["cases"]["failed_on"], Json::array({"none"}));
}

// f16 overflow counts per op at init (the precision probe): an embedding scale of 1e6 does not fit
// f16 (max 65504), so its arm overflows on every seed and the base scale nowhere; the record holds
// the counts of every overflowing op, which add up to the total the criterion judged.
TEST_F(UserClaims, F16OverflowCountsPerOp) {
  const std::string file = write("f16.toml", R"TOML(
[[claim]]
id = "huge-scale-overflows"
statement = "An embedding scale of 1e6 overflows f16 more than the base scale."
seeds = 2
arms = [ { name = "x 1e6", set = ["model.embedding.scale=1e6"] }, { name = "base" } ]
measure = { name = "f16_overflow", when = "init" }
criterion = { kind = "worse", arm = "x 1e6", than = "base" }
)TOML");
  const auto c = check(file, {"huge-scale-overflows"});
  EXPECT_EQ(c.at("huge-scale-overflows")["verdict"], "holds");
  std::ifstream in(dir_ / "out" / "claims" / "huge-scale-overflows.json");
  const Json record = Json::parse(in);
  std::vector<double> total, per_op_sum(2, 0.0);
  int ops = 0;
  for (const Json& m : record["measurements"]) {
    if (m["arm"] != "x 1e6") continue;
    const std::string name = m["name"];
    if (name == "f16 overflows over every op at init") total = m["values"].get<std::vector<double>>();
    if (name.rfind("f16 overflows of ", 0) == 0) {
      ++ops;
      for (size_t i = 0; i < 2; ++i) per_op_sum[i] += m["values"][i].get<double>();
    }
  }
  ASSERT_EQ(total.size(), 2u) << record["measurements"].dump().substr(0, 2000);
  EXPECT_GE(ops, 1);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_GT(total[i], 0.0);
    EXPECT_EQ(per_op_sum[i], total[i]);
  }
}

// The coordinate check: at a large constant Adam rate one step moves every weight by about the
// rate, so an update's effect on a layer's output grows with the width (slope near 1 in
// log-log); at a rate of 1e-9 nothing moves and the sizes are the initialisation's, which do not
// grow with width. Widths 16 and 64, 3 steps, each width a run per seed.
TEST_F(UserClaims, CoordCheckSeesActivationsGrowWithWidth) {
  const std::string file = write("coord.toml", R"TOML(
[[claim]]
id = "large-rate-blows-up"
statement = "At Adam rate 0.05 the activations grow with width over the first steps more than at 1e-9."
seeds = 2
base.set = ["train.schedule=constant", "train.warmup=0", "model.n_heads=2"]
arms = [ { name = "lr 0.05", set = ["train.lr=0.05"] }, { name = "lr 1e-9", set = ["train.lr=1e-9"] } ]
measure = { name = "coord_check", widths = [16, 64], steps = 3 }
criterion = { kind = "worse", arm = "lr 0.05", than = "lr 1e-9", margin = 0.3 }
)TOML");
  const auto c = check(file, {"large-rate-blows-up"});
  EXPECT_EQ(c.at("large-rate-blows-up")["verdict"], "holds");
  std::ifstream in(dir_ / "out" / "claims" / "large-rate-blows-up.json");
  const Json record = Json::parse(in);
  // One coordinate-check plot per arm (a series per step, a point per width), then the measure's.
  int coord_plots = 0;
  for (const Json& p : record["plots"])
    if (p["id"].get<std::string>().find("-coord-") != std::string::npos) {
      ++coord_plots;
      ASSERT_EQ(p["series"].size(), 3u);
      EXPECT_EQ(p["series"][0]["points"].size(), 2u);
    }
  EXPECT_EQ(coord_plots, 2);
  EXPECT_EQ(record["arms"].size(), 4u);  // 2 arms x 2 widths
}

// loss_curve: the criterion holds for a seed only at every point of the curve. The logged training
// loss is label-smoothed, so with smoothing 0.5 it cannot go below the smoothed target's entropy
// (about 1.9 nats on the copy task's vocabulary), while without smoothing the copy task is below
// 1 nat by mid-run: worse at both points (steps 75 and 150), never better. One swept rate, so
// both claims share the same 6 runs.
TEST_F(UserClaims, LossCurveJudgedAtEveryPoint) {
  const std::string arms = R"TOML(
seeds = 3
sweep = { key = "train.lr", values = [0.003] }
arms = [ { name = "smoothing 0.5", set = ["train.label_smoothing=0.5"] },
         { name = "smoothing 0", set = ["train.label_smoothing=0"] } ]
measure = { name = "loss_curve", points = 2 }
)TOML";
  const std::string file = write("curve.toml", "[[claim]]\nid = \"curve-higher\"\nstatement = \"s\"" + arms +
                                                   "criterion = { kind = \"worse\", arm = \"smoothing 0.5\", than = \"smoothing 0\" }\n" +
                                                   "[[claim]]\nid = \"curve-lower\"\nstatement = \"s\"" + arms +
                                                   "criterion = { kind = \"better\", arm = \"smoothing 0.5\", than = \"smoothing 0\" }\n");
  const auto c = check(file, {"curve-higher", "curve-lower"});
  EXPECT_EQ(c.at("curve-higher")["verdict"], "holds");
  EXPECT_EQ(c.at("curve-lower")["verdict"], "does not hold");
  std::ifstream in(dir_ / "out" / "claims" / "curve-higher.json");
  const Json record = Json::parse(in);
  int points = 0;
  for (const Json& m : record["measurements"])
    if (m["name"] == "training loss at step 75" || m["name"] == "training loss at step 150") ++points;
  EXPECT_EQ(points, 4);  // 2 points x 2 arms
}

TEST_F(UserClaims, ClaimsOfTheFileAreSelectedById) {
  LedgerMode mode;
  mode.quick = true;
  const std::string file = write("claims.toml", kProbeClaims);
  const auto selected = select_claims({"inv-dk-smaller-logits", "A1"}, {file}, mode);
  ASSERT_EQ(selected.size(), 2u);
  EXPECT_EQ(selected[0].info.id, "A1");
  EXPECT_EQ(selected[1].info.id, "inv-dk-smaller-logits");
  EXPECT_EQ(parse_claim_ids("inv-dk-smaller-logits, a1", {"inv-dk-smaller-logits"}),
            (std::vector<std::string>{"inv-dk-smaller-logits", "A1"}));
  EXPECT_THROW(parse_claim_ids("not-a-claim", {"inv-dk-smaller-logits"}), Error);
}

// Each bad file: one line naming the file, the claim and the key, and what is allowed.
TEST_F(UserClaims, BadFilesGiveOneLineNamingFileClaimAndKey) {
  const std::string ok_claim = R"(
[[claim]]
id = "c1"
statement = "s"
arms = [ { name = "a" }, { name = "b", set = ["model.attention.scale=inv_dk"] } ]
measure = "final_valid_loss"
criterion = { kind = "better", arm = "a", than = "b" }
)";
  EXPECT_EQ(error_of(ok_claim), "");
  struct Bad {
    std::string what, text, expect;
  };
  auto with = [&](const std::string& from, const std::string& to) {
    std::string t = ok_claim;
    t.replace(t.find(from), from.size(), to);
    return t;
  };
  const std::vector<Bad> cases = {
      {"unknown key", with("statement = \"s\"", "statement = \"s\"\nsteeps = 10"), "claim \"c1\": steeps: unknown key; allowed: id,"},
      {"unknown measure", with("\"final_valid_loss\"", "\"final_valid_los\""),
       "claim \"c1\": measure: \"final_valid_los\": unknown measure; allowed: final_valid_loss,"},
      {"unknown criterion arm", with("than = \"b\"", "than = \"c\""), "claim \"c1\": criterion.than: \"c\": no such arm; allowed: a, b"},
      {"unknown criterion kind", with("kind = \"better\"", "kind = \"best\""), "criterion.kind: \"best\": allowed: better, worse,"},
      {"sweep key not a config key", with("measure =", "sweep = { key = \"model.width\", values = [1] }\nmeasure ="),
       "claim \"c1\": sweep.key: \"model.width\": not a config key"},
      {"bad sweep value", with("measure =", "sweep = { key = \"model.attention.scale\", values = [\"sqrt\"] }\nmeasure ="),
       "claim \"c1\": arms \"a\" at sweep model.attention.scale = sqrt:"},
      {"duplicate id", ok_claim + ok_claim, "claim \"c1\": id: \"c1\": duplicate"},
      {"built-in id", with("id = \"c1\"", "id = \"a3\""), "claim \"a3\": id: \"a3\": E, A or B followed by digits"},
      {"id characters", with("id = \"c1\"", "id = \"c 1\""), "id: \"c 1\": allowed: letters, digits, - and _"},
      {"unknown measure key", with("\"final_valid_loss\"", "{ name = \"steps_to_loss\", target = 1.0, at = 3 }"),
       "measure.at: unknown key; allowed: name, target"},
      {"unknown op", with("\"final_valid_loss\"", "{ name = \"f16_overflow\", op = \"softmax\" }"),
       "claim \"c1\": measure.op: \"softmax\": allowed: all, input_cast, embedding_scale,"},
      {"coord_check without widths", with("\"final_valid_loss\"", "{ name = \"coord_check\" }"),
       "claim \"c1\": measure.widths: missing (coord_check needs an array of at least two d_model values)"},
      {"coord_check width the config rejects", with("\"final_valid_loss\"", "{ name = \"coord_check\", widths = [32, 33] }"),
       "claim \"c1\": arms \"a\" at width 33:"},
      {"criterion arm list with an unknown arm", with("arm = \"a\"", "arm = [\"a\", \"z\"]"),
       "claim \"c1\": criterion.arm: \"z\": no such arm; allowed: a, b"},
      {"bad override", with("set = [\"model.attention.scale=inv_dk\"]", "set = [\"model.d_modle=8\"]"), "claim \"c1\": arms \"b\":"},
      {"sweep with neither key nor set", with("measure =", "sweep = { name = \"d_k\", values = [1] }\nmeasure ="),
       "claim \"c1\": sweep: needs a key (a config key set to each value) or set"},
      {"sweep set without a name", with("measure =", "sweep = { values = [1], set = [[\"model.n_heads=1\"]] }\nmeasure ="),
       "claim \"c1\": sweep.name: missing"},
      {"sweep set not one per value", with("measure =", "sweep = { name = \"h\", values = [1, 2], set = [[\"model.n_heads=1\"]] }\nmeasure ="),
       "claim \"c1\": sweep.set: expected an array of 2 arrays"},
      {"sweep set override the config rejects", with("measure =", "sweep = { name = \"h\", values = [1], set = [[\"model.n_heads=3\"]] }\nmeasure ="),
       "claim \"c1\": arms \"a\" at sweep h = 1:"},
      {"sweep value twice", with("measure =", "sweep = { key = \"model.n_heads\", values = [1, 1] }\nmeasure ="),
       "claim \"c1\": sweep.values: 1: listed twice"},
      {"context not a value", with("measure =", "sweep = { key = \"model.n_heads\", values = [1, 2], context = [4] }\nmeasure ="),
       "claim \"c1\": sweep.context: 4: not one of sweep.values"},
      {"every value context", with("measure =", "sweep = { key = \"model.n_heads\", values = [1, 2], context = [1, 2] }\nmeasure ="),
       "claim \"c1\": sweep.context: every value is context"},
      {"criterion text not a string", with("than = \"b\"", "than = \"b\", text = 3"), "claim \"c1\": criterion.text: 3: expected a string"},
      {"experiment not a string", with("statement = \"s\"", "statement = \"s\"\nexperiment = [1]"), "claim \"c1\": experiment: [1]: expected a string"},
  };
  for (const Bad& b : cases) {
    const std::string e = error_of(b.text);
    EXPECT_NE(e.find(b.expect), std::string::npos) << b.what << ": " << e;
    EXPECT_EQ(e.rfind((dir_ / "bad.toml").string(), 0), 0u) << b.what << ": does not start with the file: " << e;
    EXPECT_EQ(e.find('\n'), std::string::npos) << b.what << ": more than one line: " << e;
  }
}

// The JSON Schema editors check claim files with (docs/claims-file.schema.json) names exactly the
// keys the loader accepts for a claim, its sweep and its criterion (the loader's "allowed:" list of
// an unknown key's error).
TEST_F(UserClaims, SchemaForEditorsHasTheLoadersKeys) {
  std::ifstream in(std::string(SCALELAB_TEST_SOURCE_DIR) + "/docs/claims-file.schema.json");
  ASSERT_TRUE(in) << "docs/claims-file.schema.json";
  const Json schema = Json::parse(in);
  const Json& claim = schema["properties"]["claim"]["items"]["properties"];
  auto keys_of = [](const Json& properties) {
    std::set<std::string> out;
    for (const auto& [k, v] : properties.items()) out.insert(k);
    return out;
  };
  auto allowed_in = [](const std::string& error) {
    std::set<std::string> out;
    const size_t at = error.find("allowed: ");
    std::stringstream list(at == std::string::npos ? "" : error.substr(at + 9));
    for (std::string k; std::getline(list, k, ',');) out.insert(k.substr(k.find_first_not_of(' ')));
    return out;
  };
  const std::string ok = R"(
[[claim]]
id = "c1"
statement = "s"
arms = [ { name = "a" }, { name = "b", set = ["model.attention.scale=inv_dk"] } ]
measure = "final_valid_loss"
)";
  EXPECT_EQ(allowed_in(error_of(ok + "bogus = 1\ncriterion = { kind = \"better\", arm = \"a\", than = \"b\" }\n")),
            keys_of(claim));
  EXPECT_EQ(allowed_in(error_of(ok + "sweep = { key = \"model.n_heads\", values = [1], bogus = 1 }\n"
                                     "criterion = { kind = \"better\", arm = \"a\", than = \"b\" }\n")),
            keys_of(claim["sweep"]["properties"]));
  EXPECT_EQ(allowed_in(error_of(ok + "criterion = { kind = \"better\", arm = \"a\", than = \"b\", bogus = 1 }\n")),
            keys_of(claim["criterion"]["properties"]));
}

TEST_F(UserClaims, BadFileWritesNothing) {
  const std::string file = write("bad.toml", "[[claim]]\nid = \"x\"\nbogus = 1\n");
  CheckOptions o;
  o.quick = true;
  o.claim_files = {file};
  o.out = (dir_ / "out").string();
  EXPECT_THROW(run_check(o), Error);
  EXPECT_FALSE(fs::exists(dir_ / "out"));
}

TEST(UserClaimIds, BuiltinShape) {
  EXPECT_TRUE(builtin_shaped_id("E3"));
  EXPECT_TRUE(builtin_shaped_id("b12"));
  EXPECT_FALSE(builtin_shaped_id("E"));
  EXPECT_FALSE(builtin_shaped_id("A3x"));
  EXPECT_FALSE(builtin_shaped_id("qk-norm"));
}
