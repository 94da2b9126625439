// scalelab.Model: a Transformer in memory, from a checkpoint or freshly initialised, and what the
// command line's logits, gradients and init compute with it.
//
// Arrays: token ids come in as int32 C-contiguous [batch, length] (python/scalelab/model.py checks
// and names the argument before this is called). Logits and gradients are returned as copies:
// the model overwrites its buffers on the next call. state_dict() returns read-only views of the
// weights (zero-copy), each keeping the Model alive; the weights change only through load
// (never after construction here), so a view stays valid as long as it exists.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include <cstring>
#include <filesystem>
#include <memory>

#include "bindings.hpp"
#include "exclusive_call.hpp"
#include "scalelab/data/example.hpp"
#include "scalelab/model/checkpoint.hpp"
#include "scalelab/train/loss.hpp"
#include "scalelab/train/trainer.hpp"

namespace nb = nanobind;

namespace scalelab::python {

namespace {

using TokenIds = nb::ndarray<const int32_t, nb::ndim<2>, nb::c_contig, nb::device::cpu>;
using FloatArray = nb::ndarray<nb::numpy, float>;

struct Model {
  Json run_config;  // {"model": ..., "data": ..., "train": ...} as the checkpoint or config holds it
  int64_t step = 0;
  std::string path;  // the checkpoint it was loaded from ("" if initialised here)
  std::unique_ptr<Transformer<float>> net;
};

// A copy of engine-owned floats, taken without the GIL; to_numpy hands it to numpy (with the GIL).
struct FloatCopy {
  std::unique_ptr<float[]> data;
  std::vector<size_t> shape;
};
FloatCopy copy_floats(const float* data, std::vector<size_t> shape) {
  size_t n = 1;
  for (size_t d : shape) n *= d;
  FloatCopy c{std::make_unique<float[]>(n), std::move(shape)};
  std::memcpy(c.data.get(), data, n * sizeof(float));
  return c;
}
FloatArray to_numpy(FloatCopy&& c) {
  float* owned = c.data.release();
  nb::capsule owner(owned, [](void* p) noexcept { delete[] static_cast<float*>(p); });
  return FloatArray(owned, c.shape.size(), c.shape.data(), owner);
}

// Source lengths: everything up to the last non-pad token (as `scalelab logits` reads them).
std::vector<int32_t> lengths_from_padding(const TokenIds& ids) {
  std::vector<int32_t> lengths(ids.shape(0), 0);
  for (size_t b = 0; b < ids.shape(0); ++b)
    for (size_t t = 0; t < ids.shape(1); ++t)
      if (ids(b, t) != kPadId) lengths[b] = static_cast<int32_t>(t + 1);
  return lengths;
}

struct Input {
  ModelInput model;
  std::vector<int32_t> src_lengths;
};

Input model_input(const Model& m, const std::optional<TokenIds>& src, const TokenIds& tgt) {
  Input in;
  in.model = {.batch = static_cast<int64_t>(tgt.shape(0)), .tgt_len = static_cast<int64_t>(tgt.shape(1)),
              .tgt = tgt.data()};
  if (m.net->config().arch == Architecture::encoder_decoder) {
    SL_CHECK(src.has_value(), "src is required for an encoder-decoder model (encoder token ids)");
    SL_CHECK(src->shape(0) == tgt.shape(0), "src: expected shape [", tgt.shape(0), ", length] (tgt's batch), got [",
             src->shape(0), ", ", src->shape(1), "]");
    in.src_lengths = lengths_from_padding(*src);
    in.model.src_len = static_cast<int64_t>(src->shape(1));
    in.model.src = src->data();
    in.model.src_lengths = in.src_lengths.data();
  }
  return in;
}

std::unique_ptr<Model> load_model(const std::string& path) {
  auto m = std::make_unique<Model>();
  {
    nb::gil_scoped_release release;
    ExclusiveCall call("Model.load");
    const Checkpoint c = read_checkpoint(path);
    m->net = std::make_unique<Transformer<float>>(checkpoint_model_config(c));
    load_weights(*m->net, c);
    m->run_config = c.run_config;
    m->step = c.step;
  }
  m->path = path;
  return m;
}

// As `scalelab init`: the config's model with model.seed = seed, vocabularies from the data
// when left at 0.
std::unique_ptr<Model> init_model(const std::string& tree_json, std::optional<int64_t> seed) {
  Json tree = Json::parse(tree_json);
  if (seed) tree["model"]["seed"] = *seed;
  RunConfig config = parse_run_config(tree);
  auto m = std::make_unique<Model>();
  nb::gil_scoped_release release;
  ExclusiveCall call("Model.init");
  if (config.model.tgt_vocab == 0 ||
      (config.model.arch == Architecture::encoder_decoder && config.model.src_vocab == 0)) {
    config.model = resolve_vocab(config.model, load_task(config.data));
  }
  m->net = std::make_unique<Transformer<float>>(config.model);
  m->run_config = run_config_to_json(config);
  return m;
}

}  // namespace

void bind_model(nb::module_& m) {
  nb::class_<Model>(m, "Model")
      .def_static("load", &load_model, nb::arg("path"), "Reads a scalelab checkpoint (.safetensors).")
      .def_static("init", &init_model, nb::arg("tree_json"), nb::arg("seed").none() = nb::none(),
                  "A model at initialisation from a config tree (JSON), as `scalelab init`.")
      .def_ro("step", &Model::step)
      .def_ro("path", &Model::path)
      .def_prop_ro("run_config_json", [](const Model& self) { return self.run_config.dump(); })
      .def_prop_ro("parameter_count", [](const Model& self) { return self.net->parameter_count(); })
      .def(
          "logits",
          [](Model& self, std::optional<TokenIds> src, TokenIds tgt) {
            FloatCopy logits;
            {
              nb::gil_scoped_release release;
              ExclusiveCall call("Model.logits");
              const Input in = model_input(self, src, tgt);
              const Tensor<float>& out = self.net->forward(in.model, ForwardMode{});
              logits = copy_floats(out.data(), {tgt.shape(0), tgt.shape(1),
                                                static_cast<size_t>(self.net->config().tgt_vocab)});
            }
            return to_numpy(std::move(logits));
          },
          nb::arg("src").none(), nb::arg("tgt"), "Logits [batch, tgt_len, tgt_vocab] (a copy).")
      .def(
          "gradients",
          [](Model& self, std::optional<TokenIds> src, TokenIds tgt, TokenIds target, double label_smoothing) {
            SL_CHECK(target.shape(0) == tgt.shape(0) && target.shape(1) == tgt.shape(1), "target: shape [",
                     target.shape(0), ", ", target.shape(1), "] differs from tgt's [", tgt.shape(0), ", ",
                     tgt.shape(1), "]");
            SL_CHECK(label_smoothing >= 0 && label_smoothing < 1, "label_smoothing = ", label_smoothing,
                     ": must be in [0, 1)");
            FloatCopy logits;
            double loss = 0;
            std::vector<std::pair<std::string, FloatCopy>> grads;
            {
              nb::gil_scoped_release release;
              ExclusiveCall call("Model.gradients");
              const Input in = model_input(self, src, tgt);
              self.net->zero_grad();
              const Tensor<float>& out = self.net->forward(in.model, ForwardMode{});
              const int64_t V = self.net->config().tgt_vocab;
              logits = copy_floats(out.data(), {tgt.shape(0), tgt.shape(1), static_cast<size_t>(V)});
              Tensor<float> dlogits(out.shape());
              loss = cross_entropy<float>(out.data(), target.data(), out.dim(0), V, label_smoothing, kPadId,
                                          dlogits.data())
                         .loss;
              self.net->backward(dlogits.data());
              for (Parameter<float>* p : self.net->parameters())
                grads.emplace_back(p->name, copy_floats(p->grad.data(), {p->grad.shape().begin(),
                                                                         p->grad.shape().end()}));
            }
            nb::dict grad_arrays;
            for (auto& [name, g] : grads) grad_arrays[nb::str(name.c_str())] = to_numpy(std::move(g));
            return nb::make_tuple(to_numpy(std::move(logits)), loss, grad_arrays);
          },
          nb::arg("src").none(), nb::arg("tgt"), nb::arg("target"), nb::arg("label_smoothing") = 0.0,
          "(logits, loss, {name: gradient}) as `scalelab gradients` (no dropout); copies.")
      .def(
          "state_dict",
          [](nb::handle self_handle, bool copy) {
            Model& self = nb::cast<Model&>(self_handle);
            nb::dict out;
            for (Parameter<float>* p : self.net->parameters()) {
              std::vector<size_t> shape(p->value.shape().begin(), p->value.shape().end());
              if (copy) {
                out[nb::str(p->name.c_str())] = to_numpy(copy_floats(p->value.data(), shape));
              } else {
                out[nb::str(p->name.c_str())] = nb::ndarray<nb::numpy, const float>(
                    p->value.data(), shape.size(), shape.data(), self_handle);
              }
            }
            return out;
          },
          nb::arg("copy") = false,
          "{name: weights}: read-only views that keep the model alive (copy=False) or copies.")
      .def(
          "save",
          [](Model& self, const std::string& path) {
            nb::gil_scoped_release release;
            ExclusiveCall call("Model.save");
            save_checkpoint(path, *self.net, self.run_config, self.step);
          },
          nb::arg("path"), "Writes a checkpoint (atomically); the caller checks the path first.");
}

}  // namespace scalelab::python
