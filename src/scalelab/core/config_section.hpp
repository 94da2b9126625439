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
  // Integers: a float with an integral value is accepted, one beyond +-2^53 (not exact) is not.
  int64_t get_int(const std::string& key, int64_t fallback);
  // An integer in [lo, hi]; the bound keeps every size product far from int64 overflow and
  // turns an absurd size into an error naming the key instead of a failed allocation.
  int64_t get_int_in(const std::string& key, int64_t fallback, int64_t lo, int64_t hi);
  // Every number must be finite: nan / inf are errors naming the key (no knob means "infinite").
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

// A value as the user would write it: JSON, except that non-finite floats print as nan / inf / -inf
// (JSON has no spelling for them and nlohmann prints null, which hides the problem).
std::string value_text(const Json& value);
std::string number_text(double value);

// Throws Error with "key = value: problem" for checks after reading (ranges, divisibility).
[[noreturn]] void config_error(const std::string& key, const std::string& value,
                               const std::string& problem);

}  // namespace scalelab
