// libFuzzer target: data/g014b2b: load_g014b2b on a train/test pair (input split at its first NUL) (fuzz/feed.hpp says what counts as a finding).
#include "feed.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return scalelab::fuzz::run_one(scalelab::fuzz::feed_g014b2b, data, size);
}
