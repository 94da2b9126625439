// libFuzzer target: data/bible: parse_kjv_listing and the character streams (fuzz/feed.hpp says what counts as a finding).
#include "feed.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool allow_foreign = scalelab::fuzz::foreign_exceptions_allowed();
  try {
    scalelab::fuzz::feed_kjv({reinterpret_cast<const char*>(data), size});
  } catch (const scalelab::Error&) {
    // a clean rejection: the expected outcome for most inputs
  } catch (const scalelab::fuzz::InvariantFailed&) {
    throw;  // always a finding
  } catch (const std::exception&) {
    if (!allow_foreign) throw;  // a raw library message: a finding (uncaught, libFuzzer saves it)
  }
  return 0;
}
