// One vector of floats rounded to bf16 bits (round-to-nearest-even, NaN to the quiet NaN with its
// sign), for every Highway target: the vector body of f32_to_bf16_row (bf16_convert.cpp, where
// the arithmetic is explained) and of the column sums that convert dy as they read it
// (column_sums.cpp). Included after hwy/foreach_target.h and hwy/highway.h, once per target (the
// guard toggles); .hpp so that the ledger's engine digest (CMakeLists.txt) covers it.
#if defined(SCALELAB_KERNELS_BF16_ROUND_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef SCALELAB_KERNELS_BF16_ROUND_INL_H_
#undef SCALELAB_KERNELS_BF16_ROUND_INL_H_
#else
#define SCALELAB_KERNELS_BF16_ROUND_INL_H_
#endif

#include <cstdint>

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace scalelab {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// out[0 : lanes) = bf16 bits of x (a vector of the full float tag).
template <class DF>
HWY_INLINE void StoreBf16Bits(DF /* tag */, hn::Vec<DF> x, uint16_t* HWY_RESTRICT out) {
  const hn::RebindToUnsigned<DF> du32;
  const hn::RebindToSigned<DF> di32;
  const hn::Rebind<uint16_t, DF> du16;
  const auto u = hn::BitCast(du32, x);
  const auto high = hn::ShiftRight<16>(u);
  const auto rounded =
      hn::ShiftRight<16>(hn::Add(hn::Add(u, hn::Set(du32, 0x7FFFu)), hn::And(high, hn::Set(du32, 1u))));
  // |x| bits > inf bits: NaN (a signed compare is safe: the sign bit is masked off)
  const auto is_nan = hn::RebindMask(
      du32, hn::Gt(hn::BitCast(di32, hn::And(u, hn::Set(du32, 0x7FFFFFFFu))), hn::Set(di32, 0x7F800000)));
  const auto nan = hn::Or(hn::And(high, hn::Set(du32, 0x8000u)), hn::Set(du32, 0x7FC0u));
  const auto bits = hn::IfThenElse(is_nan, nan, rounded);  // each lane < 2^16
  hn::StoreU(hn::DemoteTo(du16, hn::BitCast(di32, bits)), du16, out);
}

}  // namespace HWY_NAMESPACE
}  // namespace scalelab
HWY_AFTER_NAMESPACE();

#endif  // the toggle guard
