// LayerNorm / RMSNorm forward in an emulated format (layernorm_emulated.hpp), one row at a time.
#include "scalelab/kernels/layernorm_emulated.hpp"

#include <vector>

#include "scalelab/core/error.hpp"
#include "scalelab/core/parallel.hpp"

namespace scalelab {

void layernorm_emulated_forward(const NormShape& s, const EmulatedNormOptions& opt, const float* x,
                                const float* gamma, const float* beta, float* y,
                                OverflowCounters& counters) {
  SL_CHECK(s.rows >= 0 && s.cols > 0, "layernorm: rows = ", s.rows, ", cols = ", s.cols,
           " (cols must be positive)");
  SL_CHECK(opt.accumulate == DType::f32 || opt.accumulate == opt.dtype, "accumulate = ",
           dtype_name(opt.accumulate), " is not allowed for dtype ", dtype_name(opt.dtype),
           ": use f32 or ", dtype_name(opt.dtype));
  const int64_t n = s.cols;
  std::vector<OverflowCounters> partial(s.rows);
  parallel_for(s.rows, [&](int64_t r) {
    const Emulated fmt{opt.dtype, &partial[r]}, acc{opt.accumulate, &partial[r]};
    std::vector<float> c(n);
    for (int64_t j = 0; j < n; ++j) c[j] = fmt.cast(x[r * n + j]);
    float mean = 0.0f;
    if (!opt.rms) {  // mean = round(sum_j x_j / n)
      float sum = 0.0f;
      for (int64_t j = 0; j < n; ++j) sum = acc.add(sum, c[j], PrecisionOp::layernorm_sum);
      mean = fmt.div(sum, static_cast<float>(n), PrecisionOp::layernorm_sum);
      for (int64_t j = 0; j < n; ++j) c[j] = fmt.sub(c[j], mean, PrecisionOp::layernorm_var);
    }
    // var = round(sum_j c_j² / n)
    float ss = 0.0f;
    for (int64_t j = 0; j < n; ++j)
      ss = acc.add(ss, acc.mul(c[j], c[j], PrecisionOp::layernorm_var), PrecisionOp::layernorm_var);
    const float var = fmt.div(ss, static_cast<float>(n), PrecisionOp::layernorm_var);
    const float eps = fmt.cast(s.eps, PrecisionOp::layernorm_normalize);
    const float root = fmt.sqrt(fmt.add(var, eps, PrecisionOp::layernorm_normalize),
                                PrecisionOp::layernorm_normalize);
    const float rstd = fmt.div(1.0f, root, PrecisionOp::layernorm_normalize);
    for (int64_t j = 0; j < n; ++j) {
      float v = fmt.mul(fmt.mul(c[j], rstd, PrecisionOp::layernorm_normalize), gamma[j],
                        PrecisionOp::layernorm_normalize);
      if (beta && !opt.rms) v = fmt.add(v, beta[j], PrecisionOp::layernorm_normalize);
      y[r * n + j] = v;
    }
  });
  for (const OverflowCounters& p : partial) counters.merge(p);
}

}  // namespace scalelab
