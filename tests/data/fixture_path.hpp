// Locates tests/data/fixtures whether the test runs from ctest (SCALELAB_SOURCE set) or by hand.
#pragma once
#include <cstdlib>
#include <filesystem>
#include <string>

namespace scalelab::testing {

inline std::string data_fixture(const std::string& name) {
  if (const char* source = std::getenv("SCALELAB_SOURCE"))
    return (std::filesystem::path(source) / "tests/data/fixtures" / name).string();
  // Not __FILE__: ccache with CCACHE_BASEDIR makes it relative to the build directory, which
  // is not the directory ctest runs the test in (and gtest_discover_tests keeps only the first
  // ENVIRONMENT entry, so SCALELAB_SOURCE is unset there). tests/CMakeLists.txt defines this.
  return (std::filesystem::path(SCALELAB_TEST_SOURCE_DIR) / "tests/data/fixtures" / name).string();
}

}  // namespace scalelab::testing
