#include "scalelab/model/checkpoint_average.hpp"

#include <set>

namespace scalelab {

namespace {
// The first key of the model section whose value differs (for the error message).
std::string first_difference(const Json& a, const Json& b) {
  for (const auto& [key, value] : a.items())
    if (!b.contains(key) || b.at(key) != value) return key;
  for (const auto& [key, value] : b.items())
    if (!a.contains(key)) return key;
  return "(none)";
}
}  // namespace

AveragedCheckpoint average_checkpoints(const std::vector<std::string>& paths) {
  SL_CHECK(paths.size() >= 2, "averaging needs at least two checkpoints, got ", paths.size());
  std::set<std::string> seen;
  for (const std::string& p : paths) SL_CHECK(seen.insert(p).second, p, ": listed twice");

  AveragedCheckpoint out;
  ParameterRefs<float> params;
  std::vector<std::vector<double>> sums;  // one running sum per parameter
  Json first_model;
  // One checkpoint in memory at a time: a training checkpoint is 3x its weights (Adam moments).
  for (const std::string& path : paths) {
    const Checkpoint c = read_checkpoint(path);
    // Compared after parsing, so that a knob added since one of them was written (and so absent
    // from its metadata) counts as its default.
    const ModelConfig config = checkpoint_model_config(c);
    const Json model = model_config_to_json(config);
    if (!out.model) {
      first_model = model;
      out.model = std::make_unique<Transformer<float>>(config);
      params = out.model->parameters();
      for (Parameter<float>* p : params) sums.emplace_back(size_t(p->value.numel()), 0.0);
    } else {
      SL_CHECK(model == first_model, path, ": model config differs from ", paths.front(),
               " (first difference: model.", first_difference(first_model, model),
               "): only checkpoints of one model can be averaged");
    }
    load_weights(*out.model, c);  // checks every tensor's presence and shape
    for (size_t i = 0; i < params.size(); ++i) {
      const float* w = params[i]->value.data();
      std::vector<double>& s = sums[i];
      for (size_t j = 0; j < s.size(); ++j) s[j] += w[j];
    }
    if (out.sources.empty() || c.step >= out.step) {
      out.step = c.step;
      out.run_config = c.run_config;
    }
    out.sources.push_back(path);
    out.source_steps.push_back(c.step);
  }
  const double inv_n = 1.0 / double(paths.size());
  for (size_t i = 0; i < params.size(); ++i) {
    float* w = params[i]->value.data();
    for (size_t j = 0; j < sums[i].size(); ++j) w[j] = float(sums[i][j] * inv_n);
  }
  return out;
}

void save_averaged_checkpoint(const std::string& path, AveragedCheckpoint& averaged) {
  SL_CHECK(averaged.model, "save_averaged_checkpoint: nothing averaged");
  Json from = Json::array();
  for (size_t i = 0; i < averaged.sources.size(); ++i)
    from.push_back({{"path", averaged.sources[i]}, {"step", averaged.source_steps[i]}});
  save_checkpoint(path, *averaged.model, averaged.run_config, averaged.step,
                  {.tensors = {}, .metadata = {{"averaged_from", from.dump()}}});
}

}  // namespace scalelab
