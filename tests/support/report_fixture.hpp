// tests/support/report_fixture: private copies of the report's fixture ledgers
// (tests/report/fixtures/), in a scratch directory of this test process removed when its tests end.
//
//   const fs::path dir = fresh_fixture("ledger", "my-test");   // a copy of fixtures/ledger
//   Json e4 = read_json(dir / "claims/E4.json"); ...; write_json(dir / "claims/E4.json", e4);
#pragma once
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "scalelab/core/config_section.hpp"  // scalelab::Json

namespace scalelab::testing {

namespace report_fs = std::filesystem;

inline report_fs::path report_fixture(const std::string& name) {
  if (const char* source = std::getenv("SCALELAB_SOURCE"))
    return report_fs::path(source) / "tests/report/fixtures" / name;
  // Absolute: __FILE__ is relative under ccache's CCACHE_BASEDIR.
  return report_fs::path(SCALELAB_TEST_SOURCE_DIR) / "tests/report/fixtures" / name;
}

inline report_fs::path report_scratch_root() {
  return report_fs::temp_directory_path() / ("scalelab-report-fixture-" + std::to_string(::getpid()));
}

// Removes this process's scratch directories when its tests end.
class ReportScratchCleanup : public ::testing::Environment {
 public:
  void TearDown() override { report_fs::remove_all(report_scratch_root()); }
};
inline const auto* const report_scratch_cleanup = ::testing::AddGlobalTestEnvironment(new ReportScratchCleanup);

// A private copy of fixtures/<fixture> named `name`, replacing any earlier copy of that name.
inline report_fs::path fresh_fixture(const std::string& fixture, const std::string& name) {
  const report_fs::path dir = report_scratch_root() / name;
  report_fs::remove_all(dir);
  report_fs::create_directories(dir.parent_path());
  report_fs::copy(report_fixture(fixture), dir, report_fs::copy_options::recursive);
  return dir;
}

inline std::string read_text(const report_fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline Json read_json(const report_fs::path& p) { return Json::parse(read_text(p)); }
inline void write_json(const report_fs::path& p, const Json& j) { std::ofstream(p) << j.dump(2); }

}  // namespace scalelab::testing
