// Locates tests/data/fixtures whether the test runs from ctest (SCALELAB_SOURCE set) or by hand.
#pragma once
#include <cstdlib>
#include <filesystem>
#include <string>

namespace scalelab::testing {

inline std::string data_fixture(const std::string& name) {
  if (const char* source = std::getenv("SCALELAB_SOURCE"))
    return (std::filesystem::path(source) / "tests/data/fixtures" / name).string();
  return (std::filesystem::path(__FILE__).parent_path() / "fixtures" / name).string();
}

}  // namespace scalelab::testing
