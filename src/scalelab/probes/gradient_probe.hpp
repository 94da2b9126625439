// probes/gradient_probe: gradient norm per parameter tensor and the update/parameter ratio of one
// optimiser step, measured by snapshotting around the step (the optimiser is never touched):
//
//   probe.before_step(params);   // after backward, before clipping: ||g||, and a copy of w
//   optimizer.step(lr);          // (clipping, loss scaling: whatever the caller does)
//   probe.after_step(params);    // ||w_after - w_before||
//
//   grad_norm     ||g||_2 of the tensor's gradient as backward left it (before clipping)
//   param_norm    ||w||_2 before the step
//   update_norm   ||Δw||_2 of the step;  update_ratio = update_norm / param_norm (null if w = 0)
// Per tensor (probe "grad", site = parameter name), per layer (probe "grad_layer": the L2 norms of
// all the layer's tensors together) and for the whole model (stack "model", site "all").
#pragma once
#include <string>
#include <vector>

#include "scalelab/nn/parameter.hpp"
#include "scalelab/probes/record.hpp"

namespace scalelab::probes {

// "encoder" / "decoder" / "model" and the layer index of a parameter name (docs/checkpoint.md),
// -1 when the tensor is not in a layer.
std::pair<std::string, int64_t> parameter_location(const std::string& name);

template <class T>
class GradientProbe {
 public:
  void before_step(const ParameterRefs<T>& params);
  void after_step(const ParameterRefs<T>& params);  // same parameters, same order
  bool has_update() const { return stepped_; }
  std::vector<ProbeRecord> records(int64_t seed, int64_t step) const;

 private:
  struct Entry {
    std::string name;
    int64_t numel = 0;
    double grad_sq = 0, param_sq = 0, update_sq = 0;
    Tensor<T> before;
  };
  std::vector<Entry> entries_;
  bool stepped_ = false;
};

}  // namespace scalelab::probes
