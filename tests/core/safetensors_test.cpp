#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "scalelab/core/safetensors.hpp"

namespace scalelab {
namespace {

namespace fs = std::filesystem;

fs::path scratch(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("scalelab-safetensors-test-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir / name;
}

TEST(Safetensors, RoundTripsTensorsAndMetadata) {
  const std::vector<float> a{1, 2, 3, 4, 5, 6};
  const float b = -0.5f;
  const auto path = scratch("rt.safetensors").string();
  write_safetensors(path, {{"a", {2, 3}, a.data()}, {"b", {1}, &b}}, {{"step", "7"}});
  const SafetensorsFile f = read_safetensors(path);
  EXPECT_EQ(f.metadata.at("step"), "7");
  ASSERT_EQ(f.tensors.at("a").shape(), (Shape{2, 3}));
  for (int i = 0; i < 6; ++i) EXPECT_EQ(f.tensors.at("a")[i], a[i]);
  EXPECT_EQ(f.tensors.at("b")[0], b);
  EXPECT_FALSE(fs::exists(path + ".tmp"));
}

TEST(Safetensors, TruncatedFileIsRejectedWithItsName) {
  const std::vector<float> a(100, 1.0f);
  const auto path = scratch("trunc.safetensors").string();
  write_safetensors(path, {{"a", {100}, a.data()}}, {});
  fs::resize_file(path, fs::file_size(path) - 10);
  try {
    read_safetensors(path);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("truncated"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
}

TEST(Safetensors, MissingAndForeignFiles) {
  EXPECT_THROW(read_safetensors(scratch("nope.safetensors").string()), Error);
  const auto path = scratch("junk.safetensors").string();
  std::ofstream(path) << "this is not a checkpoint at all";
  EXPECT_THROW(read_safetensors(path), Error);
}

TEST(Safetensors, AFailedWriteLeavesTheOldFileIntact) {
  const std::vector<float> a{1, 2};
  const auto path = scratch("keep.safetensors").string();
  write_safetensors(path, {{"a", {2}, a.data()}}, {});
  // A duplicate name fails before anything is written.
  EXPECT_THROW(write_safetensors(path, {{"x", {2}, a.data()}, {"x", {2}, a.data()}}, {}), Error);
  EXPECT_EQ(read_safetensors(path).tensors.count("a"), 1u);
}

TEST(Npy, WritesWhatNumpyReads) {
  const std::vector<float> v{1.5f, -2.0f, 3.25f};
  const auto path = scratch("x.npy").string();
  write_npy(path, {3}, v.data());
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(bytes.substr(0, 6), "\x93NUMPY");
  EXPECT_EQ(bytes.size() % 64, 12u);  // 64-byte aligned header + 3 floats
  EXPECT_NE(bytes.find("'shape': (3,)"), std::string::npos);
}

}  // namespace
}  // namespace scalelab
