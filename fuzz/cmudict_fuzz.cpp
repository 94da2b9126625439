// libFuzzer target: data/cmudict: parse_cmudict, vocabularies and examples (fuzz/feed.hpp says what counts as a finding).
#include "feed.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return scalelab::fuzz::run_one(scalelab::fuzz::feed_cmudict, data, size);
}
