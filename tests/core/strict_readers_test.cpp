// The safetensors and .npy readers are strict: every malformed file is one Error naming the file
// and the problem, never a library message, a silent drop or a wrapped value (docs/robustness.md, finding 10).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "scalelab/core/safetensors.hpp"
#include "support/error_message.hpp"

namespace scalelab {
namespace {

namespace fs = std::filesystem;
using test::error_of;
using ::testing::AllOf;
using ::testing::HasSubstr;

class StrictReaders : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("scalelab-strict-readers-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // A safetensors file with this JSON header (padded to 8 bytes) and `data_bytes` bytes of data.
  std::string safetensors(const std::string& name, std::string header, size_t data_bytes) {
    while (header.size() % 8) header.push_back(' ');
    std::string bytes(8, '\0');
    for (int i = 0; i < 8; ++i) bytes[i] = char((uint64_t(header.size()) >> (8 * i)) & 0xff);
    bytes += header + std::string(data_bytes, '\0');
    std::ofstream(path(name), std::ios::binary) << bytes;
    return path(name);
  }

  // A .npy with this header dict and these raw data bytes.
  std::string npy(const std::string& name, std::string dict, const std::string& data) {
    while ((10 + dict.size() + 1) % 64) dict.push_back(' ');
    dict.push_back('\n');
    std::string bytes("\x93NUMPY\x01\x00", 8);
    bytes.push_back(char(dict.size() & 0xff));
    bytes.push_back(char(dict.size() >> 8));
    std::ofstream(path(name), std::ios::binary) << bytes << dict << data;
    return path(name);
  }

  fs::path dir_;
};

std::string read_st(const std::string& p) {
  return error_of([&] { read_safetensors(p); });
}

TEST_F(StrictReaders, WellFormedSafetensorsStillLoad) {
  const auto p = safetensors("ok.safetensors",
                             R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                             R"("b":{"dtype":"F32","shape":[],"data_offsets":[8,12]}})", 12);
  EXPECT_EQ(read_st(p), "(no error)");
}

TEST_F(StrictReaders, OverlappingOffsets) {
  const auto p = safetensors("overlap.safetensors",
                             R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                             R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})", 12);
  EXPECT_THAT(read_st(p), AllOf(HasSubstr(p), HasSubstr("tensors a [0, 8) and b [4, 12) overlap")));
}

TEST_F(StrictReaders, UnalignedOffsets) {
  const auto p = safetensors("unaligned.safetensors",
                             R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[2,6]}})", 6);
  EXPECT_THAT(read_st(p), AllOf(HasSubstr(p), HasSubstr("starts at byte 2, not a multiple of 4")));
}

TEST_F(StrictReaders, NonIntegerOrNegativeOffsets) {
  const auto a = safetensors("float.safetensors",
                             R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0.5,4.5]}})", 8);
  EXPECT_THAT(read_st(a), AllOf(HasSubstr(a), HasSubstr("data_offsets [0.5,4.5]; expected [begin, end], integers >= 0")));
  const auto b = safetensors("neg.safetensors",
                             R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[-4,0]}})", 4);
  EXPECT_THAT(read_st(b), HasSubstr("integers >= 0"));
  const auto c = safetensors("str.safetensors",
                             R"({"a":{"dtype":"F32","shape":[1],"data_offsets":"0-4"}})", 4);
  EXPECT_THAT(read_st(c), HasSubstr("data_offsets \"0-4\""));
}

TEST_F(StrictReaders, TrailingBytesAndGaps) {
  const auto a = safetensors("trailing.safetensors",
                             R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", 12);
  EXPECT_THAT(read_st(a), AllOf(HasSubstr(a), HasSubstr("8 trailing bytes after the last tensor")));
  const auto b = safetensors("gap.safetensors",
                             R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", 8);
  EXPECT_THAT(read_st(b), HasSubstr("4 unused bytes before tensor a"));
}

TEST_F(StrictReaders, MalformedHeadersNeverLeakLibraryMessages) {
  const std::string cases[][2] = {
      {"[1, 2]", "a JSON array, expected an object of tensors"},
      {"{\"__metadata__\": [1]}", "__metadata__ is a JSON array"},
      {"{\"__metadata__\": {\"step\": 3}}", "__metadata__ value step is a JSON number, expected a string"},
      {"{\"a\": 5}", "tensor a: a JSON number, expected an object"},
      {"{\"a\": {\"dtype\": \"F32\", \"data_offsets\": [0, 4]}}", "tensor a has no shape"},
      {"{\"a\": {\"dtype\": \"F32\", \"shape\": [-1], \"data_offsets\": [0, 4]}}", "dimensions must be integers >= 0"},
      {"{\"a\": {\"dtype\": 7, \"shape\": [1], \"data_offsets\": [0, 4]}}", "has dtype 7; only F32"},
      {"{\"a\": {\"dtype\": \"F32\", \"shape\": [4294967296, 4294967296], \"data_offsets\": [0, 4]}}",
       "needs more than the 8-byte data section"},
      {"{not json", "not valid JSON"},
  };
  int i = 0;
  for (const auto& [header, expected] : cases) {
    const auto p = safetensors("h" + std::to_string(i++) + ".safetensors", header, 8);
    const std::string message = read_st(p);
    EXPECT_THAT(message, AllOf(HasSubstr(p), HasSubstr(expected))) << header;
    EXPECT_THAT(message, ::testing::Not(HasSubstr("json.exception"))) << header;
  }
}

TEST_F(StrictReaders, ADirectoryIsNamedAsSuch) {
  fs::create_directories(path("dir.safetensors"));
  EXPECT_THAT(read_st(path("dir.safetensors")), HasSubstr("dir.safetensors: it is a directory"));
  Shape shape;
  EXPECT_THAT(error_of([&] { read_npy_int(path("dir.safetensors"), shape); }), HasSubstr("it is a directory"));
}

std::string int64s(std::initializer_list<int64_t> values) {
  std::string out;
  for (int64_t v : values) out.append(reinterpret_cast<const char*>(&v), 8);
  return out;
}

TEST_F(StrictReaders, NpyReadsInt64IdsThatFit) {
  const auto p = npy("ok.npy", "{'descr': '<i8', 'fortran_order': False, 'shape': (2, 2), }",
                     int64s({1, 2, 3, 2147483647}));
  Shape shape;
  const auto ids = read_npy_int(p, shape);
  EXPECT_EQ(shape, (Shape{2, 2}));
  EXPECT_EQ(ids, (std::vector<int32_t>{1, 2, 3, 2147483647}));
  const auto q = npy("vec.npy", "{'descr': '<i8', 'fortran_order': False, 'shape': (3,), }", int64s({4, 5, 6}));
  EXPECT_EQ(read_npy_int(q, shape).size(), 3u);
  EXPECT_EQ(shape, (Shape{3}));
}

TEST_F(StrictReaders, NpyInt64AboveInt32IsRefusedNotWrapped) {
  const auto p = npy("big.npy", "{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }",
                     int64s({1, (int64_t{1} << 32) + 5}));
  Shape shape;
  EXPECT_THAT(error_of([&] { read_npy_int(p, shape); }),
              AllOf(HasSubstr(p), HasSubstr("element 1 = 4294967301 does not fit in int32")));
}

TEST_F(StrictReaders, NpyShapeTextMustBeIntegers) {
  Shape shape;
  for (const char* bad : {"(2x, 5y)", "(2,,)", "(-1,)", "2, 5", "(99999999999999999999,)"}) {
    const auto p = npy("shape.npy", std::string("{'descr': '<i4', 'fortran_order': False, 'shape': ") + bad + ", }",
                       std::string(40, '\0'));
    const std::string message = error_of([&] { read_npy_int(p, shape); });
    EXPECT_THAT(message, AllOf(HasSubstr(p), HasSubstr("bad .npy header: shape"))) << bad;
    EXPECT_THAT(message, ::testing::Not(HasSubstr("stoll"))) << bad;
  }
}

TEST_F(StrictReaders, NpySizeIsCheckedBeforeAllocating) {
  // 2^40 x 2^20 int32 would be 4 PiB: refused from the file size, nothing allocated.
  const auto p = npy("huge.npy", "{'descr': '<i4', 'fortran_order': False, 'shape': (1099511627776, 1048576), }",
                     std::string(16, '\0'));
  Shape shape;
  EXPECT_THAT(error_of([&] { read_npy_int(p, shape); }), AllOf(HasSubstr(p), HasSubstr("truncated .npy data")));
  const auto q = npy("trailing.npy", "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }", std::string(12, '\0'));
  EXPECT_THAT(error_of([&] { read_npy_int(q, shape); }), HasSubstr("trailing bytes in .npy data"));
  const auto r = npy("f4.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", std::string(8, '\0'));
  EXPECT_THAT(error_of([&] { read_npy_int(r, shape); }), HasSubstr("dtype <f4 is not supported"));
  const auto s = npy("nodescr.npy", "{'fortran_order': False, 'shape': (2,), }", std::string(8, '\0'));
  EXPECT_THAT(error_of([&] { read_npy_int(s, shape); }), HasSubstr("no 'descr'"));
}

}  // namespace
}  // namespace scalelab
