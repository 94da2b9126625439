#include "scalelab/probes/gradient_probe.hpp"

#include <cmath>
#include <map>

#include "scalelab/core/error.hpp"
#include "scalelab/probes/values.hpp"

namespace scalelab::probes {

namespace {
template <class T>
double sum_sq(const T* x, int64_t n) {
  double s = 0.0;
  for (int64_t i = 0; i < n; ++i) s += static_cast<double>(x[i]) * static_cast<double>(x[i]);
  return s;
}

Values norms(int64_t numel, double grad_sq, double param_sq, double update_sq, bool stepped) {
  const double nan = std::nan("");
  const double pn = std::sqrt(param_sq), un = std::sqrt(update_sq);
  return {{"numel", static_cast<double>(numel)},
          {"grad_norm", std::sqrt(grad_sq)},
          {"grad_rms", numel ? std::sqrt(grad_sq / static_cast<double>(numel)) : nan},
          {"param_norm", pn},
          {"update_norm", stepped ? un : nan},
          {"update_ratio", stepped && pn > 0 ? un / pn : nan}};
}
}  // namespace

std::pair<std::string, int64_t> parameter_location(const std::string& name) {
  const size_t dot = name.find('.');
  std::string stack = name.substr(0, dot);
  if (stack != "encoder" && stack != "decoder") return {"model", -1};
  const std::string layers = "layers.";
  if (dot == std::string::npos || name.compare(dot + 1, layers.size(), layers) != 0)
    return {stack, -1};
  const size_t start = dot + 1 + layers.size(), end = name.find('.', start);
  try {
    return {stack, std::stoll(name.substr(start, end - start))};
  } catch (const std::exception&) {
    return {stack, -1};
  }
}

template <class T>
void GradientProbe<T>::before_step(const ParameterRefs<T>& params) {
  entries_.clear();
  entries_.reserve(params.size());
  stepped_ = false;
  for (const Parameter<T>* p : params) {
    Entry e;
    e.name = p->name;
    e.numel = p->value.numel();
    e.grad_sq = sum_sq(p->grad.data(), p->grad.numel());
    e.param_sq = sum_sq(p->value.data(), e.numel);
    e.before = p->value;
    entries_.push_back(std::move(e));
  }
}

template <class T>
void GradientProbe<T>::after_step(const ParameterRefs<T>& params) {
  SL_CHECK(params.size() == entries_.size(), "gradient probe: after_step() with ", params.size(),
           " parameters, before_step() saw ", entries_.size());
  for (size_t i = 0; i < params.size(); ++i) {
    Entry& e = entries_[i];
    SL_CHECK(params[i]->name == e.name, "gradient probe: parameter ", i, " is ", params[i]->name,
             " after the step but was ", e.name, " before");
    const T* w = params[i]->value.data();
    double s = 0.0;
    for (int64_t j = 0; j < e.numel; ++j) {
      const double d = static_cast<double>(w[j]) - static_cast<double>(e.before[j]);
      s += d * d;
    }
    e.update_sq = s;
    e.before = Tensor<T>();  // the snapshot is no longer needed
  }
  stepped_ = true;
}

template <class T>
std::vector<ProbeRecord> GradientProbe<T>::records(int64_t seed, int64_t step) const {
  std::vector<ProbeRecord> out;
  struct Sum {
    int64_t numel = 0;
    double g = 0, p = 0, u = 0;
  };
  std::map<std::pair<std::string, int64_t>, Sum> layers;
  Sum total;
  for (const Entry& e : entries_) {
    const auto [stack, layer] = parameter_location(e.name);
    ProbeRecord r = probe_record("grad", stack, layer, e.name, seed, step);
    r.values = norms(e.numel, e.grad_sq, e.param_sq, e.update_sq, stepped_);
    out.push_back(std::move(r));
    for (Sum* s : {&layers[{stack, layer}], &total}) {
      s->numel += e.numel;
      s->g += e.grad_sq;
      s->p += e.param_sq;
      s->u += e.update_sq;
    }
  }
  auto aggregate = [&](const std::string& stack, int64_t layer, const std::string& site,
                       const Sum& s) {
    ProbeRecord r = probe_record("grad_layer", stack, layer, site, seed, step);
    r.values = norms(s.numel, s.g, s.p, s.u, stepped_);
    out.push_back(std::move(r));
  };
  for (const auto& [where, s] : layers)
    aggregate(where.first, where.second, where.second < 0 ? "outside_layers" : "layer", s);
  if (!entries_.empty()) aggregate("model", -1, "all", total);
  return out;
}

template class GradientProbe<float>;
template class GradientProbe<double>;

}  // namespace scalelab::probes
