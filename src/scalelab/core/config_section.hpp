// core/config_section: strict, typed reading of one section of a configuration tree.
//
// Configs (TOML on disk, JSON in checkpoint metadata) are held as a JSON tree and read once, at
// the edge, into typed structs. A ConfigSection hands out typed values, names the full key in
// every error ("model.d_model = "abc": expected an integer"), and finish() rejects keys nobody
// read, so a misspelt key is an error rather than a silently ignored setting.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace scalelab {

using Json = nlohmann::json;

class ConfigSection {
 public:
  // section may be null or absent (every key then takes its default).
  ConfigSection(const Json* section, std::string path);

  bool has(const std::string& key) const;
  int64_t get_int(const std::string& key, int64_t fallback);
  double get_double(const std::string& key, double fallback);
  bool get_bool(const std::string& key, bool fallback);
  std::string get_string(const std::string& key, const std::string& fallback);
  // A string that must be one of `allowed`.
  std::string get_choice(const std::string& key, const std::string& fallback,
                         std::initializer_list<const char*> allowed);
  // Raw access for values that may be a number or a string (e.g. embedding.scale = "sqrt_d" | 8.0).
  const Json* get_raw(const std::string& key);
  ConfigSection subsection(const std::string& key);

  // Throws Error listing the keys that were never read, and the keys that are allowed.
  void finish() const;
  std::string full_key(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }

  [[noreturn]] void fail(const std::string& key, const std::string& problem) const;

 private:
  const Json* section_;
  std::string path_;
  std::set<std::string> read_;
};

// Throws Error with "key = value: problem" for checks after reading (ranges, divisibility).
[[noreturn]] void config_error(const std::string& key, const std::string& value,
                               const std::string& problem);

}  // namespace scalelab
