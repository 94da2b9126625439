// The output directory of scalelab check (ledger/out_dir.hpp): refused before anything is written
// (an empty path, a foreign directory, a special file where check reads or writes), locked while a
// check writes it, and marked only once accepted. Also keep_earlier_claims (a --only run keeps
// the earlier claims listed).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "scalelab/ledger/earlier_claims.hpp"
#include "scalelab/ledger/out_dir.hpp"
#include "support/error_message.hpp"

namespace scalelab::ledger {
namespace {

namespace fs = std::filesystem;
using test::error_of;
using ::testing::HasSubstr;

class OutDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("scalelab-out-dir-test-" + std::to_string(::getpid()));
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  std::string path(const std::string& name) const { return (root_ / name).string(); }
  static std::vector<std::string> entries(const fs::path& dir) {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }
  fs::path root_;
};

TEST_F(OutDirTest, EmptyPathIsRefusedBeforeAnythingIsWritten) {
  const fs::path cwd = fs::current_path();
  fs::current_path(root_);
  std::ofstream("notes.txt") << "mine\n";
  const std::string message = error_of([] { prepare_out_dir(""); });
  fs::current_path(cwd);
  EXPECT_THAT(message, HasSubstr("--out \"\": names no directory"));
  EXPECT_EQ(entries(root_), std::vector<std::string>{"notes.txt"});  // no marker, no claims/
}

TEST_F(OutDirTest, NewDirectoryIsCreatedAndMarked) {
  const OutDirLock lock = prepare_out_dir(path("new/ledger"));
  EXPECT_EQ(entries(root_ / "new/ledger"), (std::vector<std::string>{kLedgerMarker, "cache", "claims"}));
}

TEST_F(OutDirTest, ForeignDirectoryIsRefusedAndNotMarked) {
  fs::create_directories(path("foreign"));
  std::ofstream(path("foreign/notes.txt")) << "mine\n";
  EXPECT_THAT(error_of([&] { prepare_out_dir(path("foreign")); }), HasSubstr("holds files that scalelab check did not write"));
  EXPECT_EQ(entries(root_ / "foreign"), std::vector<std::string>{"notes.txt"});
  std::ofstream(path("file")) << "x";
  EXPECT_THAT(error_of([&] { prepare_out_dir(path("file")); }), HasSubstr("exists and is not a directory"));
}

TEST_F(OutDirTest, SpecialFilesWhereCheckReadsOrWritesAreRefused) {
  for (const std::string where : {"ledger.json", "claims/E1.json", "cache/0123.json"}) {
    SCOPED_TRACE(where);
    const fs::path dir = root_ / "ledger";
    fs::remove_all(dir);
    { const OutDirLock lock = prepare_out_dir(dir.string()); }
    ASSERT_EQ(::mkfifo((dir / where).c_str(), 0600), 0);
    const std::string message = error_of([&] { prepare_out_dir(dir.string()); });
    EXPECT_THAT(message, HasSubstr(where + "' is a FIFO"));
    EXPECT_TRUE(fs::is_fifo(dir / where));  // refused, never removed
  }
  const fs::path dir = root_ / "ledger";
  fs::remove(dir / "cache/0123.json");
  fs::remove_all(dir / "claims");
  std::ofstream(dir / "claims") << "x";
  EXPECT_THAT(error_of([&] { prepare_out_dir(dir.string()); }), HasSubstr("claims is a regular file, expected the directory scalelab check writes"));
}

TEST_F(OutDirTest, SecondCheckOnTheSameDirectoryIsRefusedWhileTheFirstRuns) {
  const std::string dir = path("shared");
  {
    const OutDirLock first = prepare_out_dir(dir);
    EXPECT_THAT(error_of([&] { prepare_out_dir(dir); }), HasSubstr("another scalelab check is writing this directory"));
  }
  const OutDirLock again = prepare_out_dir(dir);  // released with the first
}

TEST_F(OutDirTest, EarlierClaimsStayListed) {
  const fs::path dir = root_ / "ledger";
  { const OutDirLock lock = prepare_out_dir(dir.string()); }
  const Json e1 = {{"id", "E1"}, {"statement", "s1"}, {"verdict", "holds"}, {"condition", ""},
                   {"provisional", true}, {"key_number", nullptr}, {"sentence", "one"}, {"arms", Json::array()}};
  std::ofstream(dir / "claims/E1.json") << e1.dump();
  std::ofstream(dir / "claims/A2.json") << "{broken";
  Json ledger = {{"claims", Json::array({{{"id", "E2"}, {"verdict", "does not hold"}}})}};
  std::ostringstream progress;
  keep_earlier_claims(dir.string(), ledger, &progress);
  ASSERT_EQ(ledger["claims"].size(), 2u);
  EXPECT_EQ(ledger["claims"][0]["id"], "E1");  // canonical order: E1 before E2
  EXPECT_EQ(ledger["claims"][0]["verdict"], "holds");
  EXPECT_EQ(ledger["claims"][0]["sentence"], "one");
  EXPECT_EQ(ledger["claims"][1]["id"], "E2");
  EXPECT_EQ(ledger["earlier_claims"], Json::array({"E1"}));
  const std::string line = progress.str();
  EXPECT_EQ(std::count(line.begin(), line.end(), '\n'), 1) << line;
  EXPECT_THAT(line, HasSubstr("ledger.json also lists E1 from an earlier check"));
  EXPECT_THAT(line, HasSubstr("not listed in ledger.json: claims/A2.json"));
  EXPECT_TRUE(fs::exists(dir / "claims/A2.json"));  // never deleted
}

TEST_F(OutDirTest, NoEarlierClaimsNoLine) {
  const fs::path dir = root_ / "ledger";
  { const OutDirLock lock = prepare_out_dir(dir.string()); }
  Json ledger = {{"claims", Json::array({{{"id", "E2"}}})}};
  std::ostringstream progress;
  keep_earlier_claims(dir.string(), ledger, &progress);
  EXPECT_EQ(progress.str(), "");
  EXPECT_EQ(ledger["earlier_claims"], Json::array());
}

}  // namespace
}  // namespace scalelab::ledger
