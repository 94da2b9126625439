// Every input the fuzzers found a problem with (fuzz/regressions/<target>/) and every seed
// (fuzz/corpus/<target>/), fed to its reader through the same functions as the libFuzzer targets
// (fuzz/feed.hpp), in the normal build and the sanitizer build. A regression input must be
// rejected with scalelab::Error (or, if its name starts with "accept-", be accepted); a seed may be
// either. Anything else (another exception type, a failed invariant, a sanitizer report) fails.
#define SCALELAB_FEED_CONFIG
#include "fuzz/feed.hpp"
#include "fuzz/report_feed.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>

namespace scalelab::fuzz {
namespace {

namespace fs = std::filesystem;

struct Target {
  const char* name;
  std::function<void(std::string_view)> feed;
};

const std::vector<Target>& targets() {
  static const std::vector<Target> all = {
      {"safetensors", feed_safetensors}, {"npy", feed_npy}, {"cmudict", feed_cmudict},
      {"g014b2b", feed_g014b2b},         {"kjv", feed_kjv}, {"config", feed_config},
      {"report", feed_report}};
  return all;
}

fs::path fuzz_dir() {
  const char* source = std::getenv("SCALELAB_SOURCE");
  return fs::path(source ? source : ".") / "fuzz";
}

std::vector<fs::path> files_in(const fs::path& dir) {
  std::vector<fs::path> out;
  if (fs::is_directory(dir))
    for (const auto& e : fs::directory_iterator(dir))
      if (e.is_regular_file()) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

enum class Outcome { accepted, rejected };

// Feeds one input; a failure names the file and the foreign exception.
Outcome feed_file(const Target& t, const fs::path& file) {
  try {
    t.feed(slurp(file));
    return Outcome::accepted;
  } catch (const Error& e) {
    EXPECT_FALSE(std::string(e.what()).empty()) << file;
    return Outcome::rejected;
  } catch (const std::exception& e) {
    ADD_FAILURE() << file << ": not a scalelab::Error but " << typeid(e).name() << ": " << e.what();
  }
  return Outcome::rejected;
}

TEST(FuzzRegressions, EachInputIsRejectedWithACleanError) {
  int inputs = 0;
  for (const Target& t : targets()) {
    for (const fs::path& file : files_in(fuzz_dir() / "regressions" / t.name)) {
      ++inputs;
      const bool accept = file.filename().string().rfind("accept-", 0) == 0;
      const Outcome got = feed_file(t, file);
      EXPECT_EQ(got, accept ? Outcome::accepted : Outcome::rejected) << t.name << ": " << file;
    }
  }
  if (inputs == 0) GTEST_SKIP() << "fuzz/regressions/ holds no input yet";
}

TEST(FuzzRegressions, EverySeedIsAcceptedOrCleanlyRejected) {
  for (const Target& t : targets()) {
    const std::vector<fs::path> seeds = files_in(fuzz_dir() / "corpus" / t.name);
    EXPECT_GE(seeds.size(), 3u) << "fuzz/corpus/" << t.name << " needs seeds";
    int accepted = 0;
    for (const fs::path& file : seeds) accepted += feed_file(t, file) == Outcome::accepted;
    // Each corpus holds valid files as well as bad ones: the readers accept what they wrote.
    EXPECT_GE(accepted, 1) << "no seed of " << t.name << " is accepted";
  }
}

}  // namespace
}  // namespace scalelab::fuzz
