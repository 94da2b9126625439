// The g014b2b benchmark split (data/g014b2b.hpp), its sha256 check (data/sha256.hpp) and the
// data.split / data.g014b2b_dir keys of the cmudict task.
#include "scalelab/data/g014b2b.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "data/fixture_path.hpp"
#include "scalelab/core/error.hpp"
#include "scalelab/data/sha256.hpp"
#include "scalelab/data/task.hpp"
#include "scalelab/train/g2p_eval.hpp"

namespace scalelab {
namespace {

namespace fs = std::filesystem;

// tests/data/fixtures/g014b2b_small: the first 150 lines of g014b2b.train and 40 of g014b2b.test.
constexpr const char* kFixtureTrainSha256 =
    "e1a24edaca81a5461b4349ff5aa95743d01fcc7b70e65e8ad80d99c62c407e7c";
constexpr const char* kFixtureTestSha256 =
    "fd6dd5c9026f75245ba38ab78f9ca8e10a680df03a15e55ed3ee81fa3b84436d";

std::string fixture_dir() { return testing::data_fixture("g014b2b_small"); }

G014b2bOptions fixture_options() {
  return {.dir = fixture_dir(), .train_sha256 = kFixtureTrainSha256,
          .test_sha256 = kFixtureTestSha256};
}

// word -> number of lines (pronunciations) in a g014b2b-format file.
std::map<std::string, size_t> lines_per_word(const std::string& path) {
  std::ifstream in(path);
  std::map<std::string, size_t> out;
  for (std::string line; std::getline(in, line);) {
    std::string word = line.substr(0, line.find('\t'));
    for (char& c : word) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    ++out[word];
  }
  return out;
}

std::string error_message(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

struct TempDir {
  fs::path path = fs::temp_directory_path() / ("scalelab_g014b2b_" + std::to_string(::getpid()));
  TempDir() {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
};

TEST(SplitSha256, KnownAnswerVectors) {
  // FIPS 180-4 / NIST examples.
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256_hex("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjkl"
                       "mnopqklmnopqrlmnopqrsmnopqrstnopqrstu"),
            "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
  EXPECT_EQ(sha256_hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  // Lengths around the padding boundaries (values from Python's hashlib).
  const std::map<size_t, std::string> around = {
      {55, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318"},
      {56, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a"},
      {63, "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34"},
      {64, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb"},
      {65, "635361c48bb9eab14198e76ea8ab7f1a41685d6ad62aa9146d301d4f17eb0ae0"},
      {119, "31eba51c313a5c08226adf18d4a359cfdfd8d2e816b13f4af952f7ea6584dcfb"},
      {120, "2f3d335432c70b580af0e8e1b3674a7c020d683aa5f73aaaedfdc55af904c21c"}};
  for (const auto& [n, digest] : around) EXPECT_EQ(sha256_hex(std::string(n, 'a')), digest) << n;
}

TEST(SplitSha256, PiecewiseUpdatesAndFilesGiveTheSameDigest) {
  const std::string text(1000, 'x');
  for (size_t piece : {1u, 7u, 63u, 64u, 65u, 300u}) {
    Sha256 s;
    for (size_t i = 0; i < text.size(); i += piece) s.update(text.substr(i, piece));
    EXPECT_EQ(s.hex_digest(), sha256_hex(text)) << piece;
  }
  EXPECT_EQ(sha256_file(fixture_dir() + "/g014b2b.train"), kFixtureTrainSha256);
  EXPECT_EQ(sha256_file(fixture_dir() + "/g014b2b.test"), kFixtureTestSha256);
  EXPECT_THROW(sha256_file(fixture_dir() + "/absent"), Error);
}

TEST(G014b2bSplit, FixtureIsSplitByWordWithValidCarvedFromTrain) {
  const G014b2bSplit s = load_g014b2b(fixture_options());
  const auto train_lines = lines_per_word(fixture_dir() + "/g014b2b.train");
  const auto test_lines = lines_per_word(fixture_dir() + "/g014b2b.test");
  EXPECT_EQ(s.train_stats.dropped(), 0);
  EXPECT_EQ(s.split.train.size() + s.split.valid.size(), train_lines.size());
  EXPECT_EQ(s.split.test.size(), test_lines.size());
  EXPECT_FALSE(s.split.valid.empty());
  EXPECT_FALSE(s.split.train.empty());
  const SplitOptions carve{.seed = 20170612, .valid_fraction = 0.05, .test_fraction = 0};
  std::set<std::string> seen;
  size_t multi = 0;
  for (const auto* side : {&s.split.train, &s.split.valid, &s.split.test}) {
    for (const CmudictEntry& e : *side) {
      EXPECT_TRUE(seen.insert(e.word).second) << e.word << " is on two sides";
      // Every line of a word is in its one entry: its pronunciations are kept together.
      const auto& lines = side == &s.split.test ? test_lines : train_lines;
      ASSERT_TRUE(lines.count(e.word)) << e.word;
      EXPECT_EQ(e.pronunciations.size(), lines.at(e.word)) << e.word;
      multi += e.pronunciations.size() > 1;
      if (side != &s.split.test) {  // valid is exactly the hash's 5 % of the train file's words
        EXPECT_EQ(side == &s.split.valid, side_of_word(e.word, carve) == SplitSide::valid) << e.word;
      }
    }
  }
  EXPECT_GE(multi, 10u);  // the fixture has many multi-pronunciation words
  // Words are lower-cased; variants in file order ("aaronson" has two).
  const auto it = std::find_if(s.split.train.begin(), s.split.train.end(),
                               [](const CmudictEntry& e) { return e.word == "aaronson"; });
  const auto iv = std::find_if(s.split.valid.begin(), s.split.valid.end(),
                               [](const CmudictEntry& e) { return e.word == "aaronson"; });
  const CmudictEntry& aaronson = it != s.split.train.end() ? *it : *iv;
  EXPECT_EQ(aaronson.pronunciations.size(), 2u);
  // Another seed moves words between train and valid, never into test.
  G014b2bOptions other = fixture_options();
  other.seed = 7;
  const G014b2bSplit t = load_g014b2b(other);
  EXPECT_EQ(t.split.train.size() + t.split.valid.size(), train_lines.size());
  EXPECT_EQ(t.split.test.size(), s.split.test.size());
}

TEST(G014b2bSplit, CorruptedOrMissingFileIsAnError) {
  TempDir tmp;
  fs::copy_file(fixture_dir() + "/g014b2b.train", tmp.path / "g014b2b.train");
  fs::copy_file(fixture_dir() + "/g014b2b.test", tmp.path / "g014b2b.test");
  G014b2bOptions o = fixture_options();
  o.dir = tmp.path.string();
  EXPECT_NO_THROW(load_g014b2b(o));
  {  // one changed phone
    std::fstream f(tmp.path / "g014b2b.test", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(10);
    f.put('Z');
  }
  const std::string error = error_message([&] { load_g014b2b(o); });
  EXPECT_NE(error.find("g014b2b.test"), std::string::npos) << error;
  EXPECT_NE(error.find(kFixtureTestSha256), std::string::npos) << error;
  EXPECT_NE(error.find(sha256_file((tmp.path / "g014b2b.test").string())), std::string::npos) << error;
  // The real digests do not match the fixture.
  G014b2bOptions real_sums = {.dir = fixture_dir()};
  EXPECT_NE(error_message([&] { load_g014b2b(real_sums); }).find(kG014b2bTrainSha256),
            std::string::npos);
  fs::remove(tmp.path / "g014b2b.train");
  EXPECT_NE(error_message([&] { load_g014b2b(o); }).find("g014b2b.train' not found"),
            std::string::npos);
}

TEST(G014b2bSplit, AWordOnBothSidesIsAnError) {
  TempDir tmp;
  fs::copy_file(fixture_dir() + "/g014b2b.train", tmp.path / "g014b2b.train");
  std::ofstream(tmp.path / "g014b2b.test") << "ABBE\tAE B IY\nZEBRA\tZ IY B R AH\n";
  const std::string error =
      error_message([&] { load_g014b2b({.dir = tmp.path.string(), .train_sha256 = "", .test_sha256 = ""}); });
  EXPECT_NE(error.find("'abbe' is in both"), std::string::npos) << error;
}

DataConfig parse(const Json& j) { return parse_data_config(ConfigSection(&j, "data")); }

std::string config_error(const Json& j) {
  return error_message([&] { parse(j); });
}

TEST(TaskG014b2b, ConfigKeysOfTheChosenSplitOnly) {
  const DataConfig d = parse(Json{{"task", "cmudict"}});
  EXPECT_EQ(d.split, "hash");
  EXPECT_EQ(d.g014b2b_dir, default_g014b2b_dir());
  EXPECT_TRUE(fs::is_regular_file(fs::path(default_g014b2b_dir()) / "g014b2b.train"))
      << default_g014b2b_dir();
  const std::string unknown = config_error({{"task", "cmudict"}, {"split", "random"}});
  EXPECT_NE(unknown.find("data.split"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("hash"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("g014b2b"), std::string::npos) << unknown;
  EXPECT_NE(config_error({{"task", "cmudict"}, {"split", "g014b2b"}, {"path", "x"}}).find("data.path"),
            std::string::npos);
  EXPECT_NE(config_error({{"task", "cmudict"}, {"g014b2b_dir", "x"}}).find("data.g014b2b_dir"),
            std::string::npos);
  EXPECT_NE(config_error({{"task", "cmudict"}, {"split", "hash"}, {"g014b2b_dir", "x"}})
                .find("data.g014b2b_dir"),
            std::string::npos);
  EXPECT_NE(config_error({{"task", "cmudict"}, {"split", "g014b2b"}, {"g014b2b_dir", ""}})
                .find("data.g014b2b_dir"),
            std::string::npos);
  EXPECT_NE(config_error({{"task", "copy"}, {"split", "g014b2b"}}).find("data.split"),
            std::string::npos);
  for (const char* key : {"max_train_words", "max_eval_words", "split_seed"})
    EXPECT_NE(config_error({{"task", "cmudict"}, {"split", "g014b2b"}, {key, -1}}).find(
                  std::string("data.") + key),
              std::string::npos)
        << key;
}

TEST(TaskG014b2b, ConfigRoundTripsThroughJson) {
  const DataConfig c = parse(Json{{"task", "cmudict"}, {"split", "g014b2b"},
                                  {"g014b2b_dir", "/some/dir"}, {"max_eval_words", 9}});
  const Json j = data_config_to_json(c);
  EXPECT_EQ(j.at("split"), "g014b2b");
  EXPECT_EQ(j.at("g014b2b_dir"), "/some/dir");
  EXPECT_FALSE(j.contains("path"));
  const DataConfig back = parse(j);
  EXPECT_EQ(back.split, "g014b2b");
  EXPECT_EQ(back.g014b2b_dir, "/some/dir");
  EXPECT_EQ(back.max_eval_words, 9);
  const Json h = data_config_to_json(parse(Json{{"task", "cmudict"}}));
  EXPECT_EQ(h.at("split"), "hash");
  EXPECT_FALSE(h.contains("g014b2b_dir"));
}

// The shipped files themselves, read without the loader: their sha256, line and word counts, and
// no word of the test file in the train file (so none in train or valid, which are carved from it).
TEST(G014b2bFiles, ShippedFilesHaveTheirChecksumsCountsAndDisjointWords) {
  const std::string dir = default_g014b2b_dir();
  const std::string train = dir + "/" + kG014b2bTrainFile, test = dir + "/" + kG014b2bTestFile;
  EXPECT_EQ(sha256_file(train), kG014b2bTrainSha256);
  EXPECT_EQ(sha256_file(test), kG014b2bTestSha256);
  const auto train_words = lines_per_word(train), test_words = lines_per_word(test);
  auto lines = [](const std::map<std::string, size_t>& m) {
    size_t n = 0;
    for (const auto& [w, count] : m) n += count;
    return n;
  };
  EXPECT_EQ(lines(train_words), 113438u);
  EXPECT_EQ(lines(test_words), 12753u);
  EXPECT_EQ(train_words.size(), 106837u);
  EXPECT_EQ(test_words.size(), 12000u);
  size_t shared = 0;
  for (const auto& [w, count] : test_words) shared += train_words.count(w);
  EXPECT_EQ(shared, 0u) << "test words found in the train file";
}

TEST(TaskG014b2b, RealSplitLoadsWithItsChecksumsAndSlices) {
  const DataConfig full = parse(Json{{"task", "cmudict"}, {"split", "g014b2b"}});
  const TaskData d = load_task(full);
  EXPECT_EQ(d.train_words.size() + d.valid_words.size(), 106837u);
  EXPECT_EQ(d.test_words.size(), 12000u);
  EXPECT_EQ(d.train.size() + d.valid.size(), 113438u);  // one example per line
  EXPECT_EQ(d.test.size(), 12753u);
  const double valid_share = double(d.valid_words.size()) / 106837.0;
  EXPECT_NEAR(valid_share, 0.05, 0.003);
  EXPECT_EQ(d.src_vocab.size(), 4 + 27);  // a-z and the apostrophe
  EXPECT_EQ(d.tgt_vocab.size(), 4 + 39);
  EXPECT_EQ(known_letters(d.src_vocab), "' a-z");  // in the messages of g2p and eval
  std::set<std::string> seen;
  for (const auto* side : {&d.train_words, &d.valid_words, &d.test_words})
    for (const auto& e : *side) EXPECT_TRUE(seen.insert(e.word).second) << e.word;
  // Slices: evenly spaced words, the vocabularies unchanged.
  const TaskData s = load_task(parse(Json{{"task", "cmudict"}, {"split", "g014b2b"},
                                          {"max_train_words", 50}, {"max_eval_words", 20}}));
  EXPECT_EQ(s.train_words.size(), 50u);
  EXPECT_EQ(s.valid_words.size(), 20u);
  EXPECT_EQ(s.test_words.size(), 20u);
  EXPECT_EQ(s.src_vocab.size(), d.src_vocab.size());
  EXPECT_EQ(s.tgt_vocab.size(), d.tgt_vocab.size());
  // A directory without the files names the missing one.
  TempDir tmp;
  const std::string missing = error_message([&] {
    load_task(parse(Json{{"task", "cmudict"}, {"split", "g014b2b"}, {"g014b2b_dir", tmp.path.string()}}));
  });
  EXPECT_NE(missing.find("g014b2b.train"), std::string::npos) << missing;
}

}  // namespace
}  // namespace scalelab
