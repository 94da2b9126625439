// libFuzzer target: train/run_config: a TOML config plus --set overrides through load_run_config (fuzz/feed.hpp says what counts as a finding).
#include "feed.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return scalelab::fuzz::run_one(scalelab::fuzz::feed_config, data, size);
}
