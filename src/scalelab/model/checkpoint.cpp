#include "scalelab/model/checkpoint.hpp"

#include <cstring>
#include <map>

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
  } catch (const Json::parse_error& e) {
    throw_error(path, ": bad checkpoint metadata: config is not valid JSON (at byte ", e.byte, ")");
  } catch (const Json::exception&) {  // e.g. a number beyond double's range (1e400)
    throw_error(path, ": bad checkpoint metadata: config holds a number out of range");
  }
  SL_CHECK(c.run_config.is_object(), path, ": bad checkpoint metadata: config is a JSON ",
           c.run_config.type_name(), ", expected an object");
  const std::string& step = meta.at("step");
  SL_CHECK(!step.empty() && step.size() <= 18 && step.find_first_not_of("0123456789") == std::string::npos,
           path, ": bad checkpoint metadata: step = \"", step, "\", expected an integer >= 0");
  c.step = std::stoll(step);  // at most 18 digits: fits
  return c;
}

ModelConfig checkpoint_model_config(const Checkpoint& c) {
  SL_CHECK(c.run_config.contains("model"), c.path, ": checkpoint config has no model section");
  return parse_model_config(ConfigSection(&c.run_config.at("model"), "model"));
}

void load_weights(Transformer<float>& model, const Checkpoint& c) {
  // What the file may hold: the model's parameters, their Adam moments (same shapes) and the loss
  // scaler's state. Anything else means the tensors and the config disagree (e.g. a 2-layer file
  // whose config says 1 layer): refused rather than silently dropped.
  std::map<std::string, const Shape*> expected;
  for (Parameter<float>* p : model.parameters()) {
    expected[p->name] = &p->value.shape();
    expected["optimizer.m." + p->name] = &p->value.shape();
    expected["optimizer.v." + p->name] = &p->value.shape();
  }
  static const Shape kScalerShape{4};
  expected["loss_scaler.state"] = &kScalerShape;
  for (const auto& [name, tensor] : c.file.tensors) {
    auto it = expected.find(name);
    SL_CHECK(it != expected.end(), c.path, ": tensor ", name, " is not used by the checkpoint's model config",
             " (", c.file.tensors.size(), " tensors in the file; does its config match its weights?)");
    SL_CHECK(tensor.shape() == *it->second, c.path, ": tensor ", name, " has shape ",
             shape_str(tensor.shape()), ", the model expects ", shape_str(*it->second));
  }
  for (Parameter<float>* p : model.parameters()) {
    auto it = c.file.tensors.find(p->name);
    SL_CHECK(it != c.file.tensors.end(), c.path, ": tensor ", p->name, " is missing");
    std::memcpy(p->value.data(), it->second.data(), p->value.bytes());
  }
}

}  // namespace scalelab
