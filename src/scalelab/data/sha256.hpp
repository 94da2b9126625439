// data/sha256: SHA-256 (FIPS 180-4), to verify the data files shipped in the repository.
//
// A compact implementation written for this project (no library linked here provides it: OpenSSL
// is not linked). Checked against the FIPS 180-4 / NIST known-answer vectors in
// tests/data/g014b2b_split_test.cpp.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace scalelab {

class Sha256 {
 public:
  Sha256();
  void update(const void* data, size_t size);
  void update(std::string_view text) { update(text.data(), text.size()); }
  std::string hex_digest();  // 64 lower-case hex digits; finalises (call once)

 private:
  void block(const unsigned char* p);
  uint32_t h_[8];
  unsigned char buffer_[64];
  size_t buffered_ = 0;
  uint64_t bytes_ = 0;
};

std::string sha256_hex(std::string_view bytes);
// The digest of a file's bytes; throws Error if it cannot be read.
std::string sha256_file(const std::string& path);

}  // namespace scalelab
