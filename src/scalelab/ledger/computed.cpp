#include "scalelab/ledger/computed.hpp"

#include <dlfcn.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "scalelab/core/error.hpp"
#include "scalelab/ledger/cache.hpp"
#include "scalelab/ledger/runs.hpp"

namespace fs = std::filesystem;

namespace scalelab::ledger {
namespace {

Json number_json(double x) {
  if (std::isfinite(x)) return x;
  if (std::isnan(x)) return "nan";
  return x > 0 ? "inf" : "-inf";
}

std::optional<double> number_from_json(const Json& j) {
  if (j.is_number()) return j.get<double>();
  if (j == "inf") return std::numeric_limits<double>::infinity();
  if (j == "-inf") return -std::numeric_limits<double>::infinity();
  if (j == "nan") return std::numeric_limits<double>::quiet_NaN();
  return std::nullopt;
}

}  // namespace

const std::vector<double>& ComputedValues::at(const std::string& name) const {
  auto it = series_.find(name);
  SL_CHECK(it != series_.end(), "computed values: no series \"", name, "\"");
  return it->second;
}

Json ComputedValues::to_json() const {
  Json j = Json::object();
  for (const auto& [name, values] : series_) {
    Json a = Json::array();
    for (double v : values) a.push_back(number_json(v));
    j[name] = std::move(a);
  }
  return j;
}

std::optional<std::string> ComputedValues::from_json(const Json& j, ComputedValues& out) {
  if (!j.is_object()) return std::string("a JSON ") + j.type_name() + ", expected an object of series";
  ComputedValues v;
  for (const auto& [name, values] : j.items()) {
    if (!values.is_array()) return "series \"" + name + "\": a JSON " + values.type_name() + ", expected an array";
    std::vector<double>& s = v.series_[name];
    for (const Json& x : values) {
      const std::optional<double> d = number_from_json(x);
      if (!d) return "series \"" + name + "\": " + x.dump().substr(0, 40) + ", expected a number, \"inf\", \"-inf\" or \"nan\"";
      s.push_back(*d);
    }
  }
  out = std::move(v);
  return std::nullopt;
}

std::string ComputedCache::key(const std::string& claim, const std::string& name, const Json& inputs) const {
  const Json k = {{"claim", claim}, {"computation", name}, {"inputs", inputs},
                  {"version", binary_version()}, {"code", running_code_digest()}};
  return key_digest(k.dump());
}

std::string ComputedCache::path(const std::string& key) const {
  return dir_.empty() ? "" : (fs::path(dir_) / ("computed-" + key + ".json")).string();
}

ComputedValues ComputedCache::get(const std::string& claim, const std::string& name, const Json& inputs,
                                  const std::vector<std::string>& required,
                                  const std::function<ComputedValues()>& compute) {
  const std::string k = key(claim, name, inputs);
  if (auto it = memory_.find(k); it != memory_.end()) return it->second;
  ComputedValues values;
  auto problem_of = [&](const Json& result) -> std::optional<std::string> {
    if (auto p = ComputedValues::from_json(result, values)) return p;
    for (const std::string& r : required)
      if (!values.has(r)) return "no series \"" + r + "\"";
    return std::nullopt;
  };
  bool found = false;
  if (!dir_.empty()) found = find_cache_entry(path(k), k, problem_of, "computing it again", warnings_).has_value();
  if (found) {
    ++from_cache_;
  } else {
    // Fresh values take the stored path too: the claim reads what a later check would read back.
    const Json stored = Json::parse(compute().to_json().dump());
    if (auto p = problem_of(stored))
      throw_error(claim, " ", name, ": the computation's own result is not readable: ", *p);
    if (!dir_.empty()) store_cache_entry(path(k), k, claim + " " + name, stored);
    ++computed_;
  }
  return memory_[k] = values;
}

const std::string& running_code_digest() {
  static const std::string code = [] {
    // The object the ledger's code is in: the executable, or a shared object (the Python module).
    Dl_info info{};
    std::ifstream in;
    if (::dladdr(reinterpret_cast<void*>(&running_code_digest), &info) != 0 && info.dli_fname && *info.dli_fname)
      in.open(info.dli_fname, std::ios::binary);
    if (!in.is_open()) in.open("/proc/self/exe", std::ios::binary);
    SL_CHECK(in.is_open(), "the ledger cannot read its own binary (",
             info.dli_fname ? info.dli_fname : "/proc/self/exe", "), whose digest keys the cache of computed values");
    uint64_t a = kFnvOffset, b = 0x84222325cbf29ce4ull;
    std::vector<char> buffer(1 << 20);
    while (in) {
      in.read(buffer.data(), std::streamsize(buffer.size()));
      const size_t n = static_cast<size_t>(in.gcount());
      a = fnv1a(buffer.data(), n, a);
      b = fnv1a(buffer.data(), n, b);
    }
    return hex64(a) + hex64(b);
  }();
  return code;
}

}  // namespace scalelab::ledger
