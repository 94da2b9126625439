// User claim files (docs/claims-file.md): each verdict kind from real runs at initialisation (the
// quick copy task's model, probe arms: seconds), and every bad-file case as one Error line naming
// the file, the claim and the key, with nothing written.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

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
      {"bad override", with("set = [\"model.attention.scale=inv_dk\"]", "set = [\"model.d_modle=8\"]"), "claim \"c1\": arms \"b\":"},
  };
  for (const Bad& b : cases) {
    const std::string e = error_of(b.text);
    EXPECT_NE(e.find(b.expect), std::string::npos) << b.what << ": " << e;
    EXPECT_EQ(e.rfind((dir_ / "bad.toml").string(), 0), 0u) << b.what << ": does not start with the file: " << e;
    EXPECT_EQ(e.find('\n'), std::string::npos) << b.what << ": more than one line: " << e;
  }
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
