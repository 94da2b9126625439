#include "scalelab/probes/moments.hpp"

#include "scalelab/core/error.hpp"

namespace scalelab::probes {

void RunningMoments::merge(const RunningMoments& o) {
  if (o.count == 0) return;
  if (count == 0) {
    *this = o;
    return;
  }
  const double na = static_cast<double>(count), nb = static_cast<double>(o.count);
  const double n = na + nb, d = o.mean - mean;
  mean += d * nb / n;
  m2 += o.m2 + d * d * na * nb / n;
  count += o.count;
  if (o.min < min) min = o.min;
  if (o.max > max) max = o.max;
}

template <class T>
RunningMoments block_moments(const T* x, int64_t n) {
  RunningMoments r;
  if (n <= 0) return r;
  double sum = 0.0, lo = static_cast<double>(x[0]), hi = lo;
  for (int64_t i = 0; i < n; ++i) {
    const double v = static_cast<double>(x[i]);
    sum += v;
    lo = std::fmin(lo, v);
    hi = std::fmax(hi, v);
  }
  const double mean = sum / static_cast<double>(n);
  double m2 = 0.0, c = 0.0;  // c: the corrected two-pass term (sum of deviations, ~0)
  for (int64_t i = 0; i < n; ++i) {
    const double d = static_cast<double>(x[i]) - mean;
    m2 += d * d;
    c += d;
  }
  r.count = n;
  r.mean = mean;
  r.m2 = m2 - c * c / static_cast<double>(n);
  r.min = lo;
  r.max = hi;
  return r;
}

template RunningMoments block_moments<float>(const float*, int64_t);
template RunningMoments block_moments<double>(const double*, int64_t);

void RangeMoments::merge(const RangeMoments& o) {
  SL_CHECK(lo == o.lo && hi == o.hi, "probes: cannot merge range counts over [", lo, ", ", hi,
           "] and [", o.lo, ", ", o.hi, "]");
  moments.merge(o.moments);
  within += o.within;
}

}  // namespace scalelab::probes
