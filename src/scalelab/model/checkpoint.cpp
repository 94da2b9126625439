#include "scalelab/model/checkpoint.hpp"

#include <cstring>

namespace scalelab {

void save_checkpoint(const std::string& path, Transformer<float>& model, const Json& run_config,
                     int64_t step, const CheckpointExtras& extras) {
  std::vector<TensorRef> tensors;
  for (Parameter<float>* p : model.parameters())
    tensors.push_back({p->name, p->value.shape(), p->value.data()});
  tensors.insert(tensors.end(), extras.tensors.begin(), extras.tensors.end());
  std::map<std::string, std::string> metadata = {
      {"format", kCheckpointFormat}, {"config", run_config.dump()}, {"step", std::to_string(step)}};
  for (const auto& [key, value] : extras.metadata) {
    SL_CHECK(!metadata.count(key), "checkpoint metadata key ", key, " is reserved");
    metadata[key] = value;
  }
  write_safetensors(path, tensors, metadata);
}

Checkpoint read_checkpoint(const std::string& path) {
  Checkpoint c;
  c.path = path;
  c.file = read_safetensors(path);
  const auto& meta = c.file.metadata;
  auto format = meta.find("format");
  SL_CHECK(format != meta.end() && format->second == kCheckpointFormat, path,
           ": not a scalelab checkpoint (metadata format = ",
           format == meta.end() ? "(missing)" : format->second, ", expected ", kCheckpointFormat, ")");
  SL_CHECK(meta.count("config") && meta.count("step"), path,
           ": checkpoint metadata lacks config or step");
  try {
    c.run_config = Json::parse(meta.at("config"));
    c.step = std::stoll(meta.at("step"));
  } catch (const std::exception& e) {
    throw_error(path, ": bad checkpoint metadata: ", e.what());
  }
  return c;
}

ModelConfig checkpoint_model_config(const Checkpoint& c) {
  SL_CHECK(c.run_config.contains("model"), c.path, ": checkpoint config has no model section");
  return parse_model_config(ConfigSection(&c.run_config.at("model"), "model"));
}

void load_weights(Transformer<float>& model, const Checkpoint& c) {
  for (Parameter<float>* p : model.parameters()) {
    auto it = c.file.tensors.find(p->name);
    SL_CHECK(it != c.file.tensors.end(), c.path, ": tensor ", p->name, " is missing");
    SL_CHECK(it->second.shape() == p->value.shape(), c.path, ": tensor ", p->name, " has shape ",
             shape_str(it->second.shape()), ", the model expects ", shape_str(p->value.shape()));
    std::memcpy(p->value.data(), it->second.data(), p->value.bytes());
  }
}

}  // namespace scalelab
