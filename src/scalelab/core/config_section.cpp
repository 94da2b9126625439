#include "scalelab/core/config_section.hpp"

#include <cmath>
#include <cstdint>

#include "scalelab/core/error.hpp"

namespace scalelab {

ConfigSection::ConfigSection(const Json* section, std::string path)
    : section_(section), path_(std::move(path)) {
  if (section_ && !section_->is_object()) {
    throw_error(path_, " must be a table (a [", path_, "] section), got ", value_text(*section_));
  }
}

bool ConfigSection::has(const std::string& key) const {
  return section_ && section_->contains(key);
}

std::string number_text(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  return Json(value).dump();
}

std::string value_text(const Json& value) {
  if (value.is_number_float()) return number_text(value.get<double>());
  if (value.is_array() || value.is_object()) {  // nested: dump, but with the non-finite spelt out
    std::string out = value.is_array() ? "[" : "{";
    for (auto it = value.begin(); it != value.end(); ++it) {
      if (it != value.begin()) out += ",";
      if (value.is_object()) out += Json(it.key()).dump() + ":";
      out += value_text(*it);
    }
    return out + (value.is_array() ? "]" : "}");
  }
  return value.dump();
}

void ConfigSection::fail(const std::string& key, const std::string& problem) const {
  const std::string value = has(key) ? value_text(section_->at(key)) : "(missing)";
  config_error(full_key(key), value, problem);
}

void config_error(const std::string& key, const std::string& value, const std::string& problem) {
  throw_error("config: ", key, " = ", value, ": ", problem);
}

int64_t ConfigSection::get_int(const std::string& key, int64_t fallback) {
  read_.insert(key);
  if (!has(key)) return fallback;
  const Json& v = section_->at(key);
  if (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(INT64_MAX))
    fail(key, "expected an integer below 2^63");
  if (v.is_number_integer()) return v.get<int64_t>();
  if (v.is_number_float()) {
    const double d = v.get<double>();
    constexpr double kExact = 9007199254740992.0;  // 2^53: beyond it a double is not an exact integer
    if (std::isfinite(d) && std::floor(d) == d && std::fabs(d) <= kExact) return static_cast<int64_t>(d);
    if (std::isfinite(d) && std::floor(d) == d) fail(key, "expected an integer within +-2^53");
  }
  fail(key, "expected an integer");
}

int64_t ConfigSection::get_int_in(const std::string& key, int64_t fallback, int64_t lo, int64_t hi) {
  const int64_t v = get_int(key, fallback);
  if (v < lo || v > hi)
    fail(key, "must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return v;
}

double ConfigSection::get_double(const std::string& key, double fallback) {
  read_.insert(key);
  if (!has(key)) return fallback;
  const Json& v = section_->at(key);
  if (!v.is_number()) fail(key, "expected a number");
  if (!std::isfinite(v.get<double>())) fail(key, "must be a finite number");
  return v.get<double>();
}

bool ConfigSection::get_bool(const std::string& key, bool fallback) {
  read_.insert(key);
  if (!has(key)) return fallback;
  const Json& v = section_->at(key);
  if (v.is_boolean()) return v.get<bool>();
  fail(key, "expected true or false");
}

std::string ConfigSection::get_string(const std::string& key, const std::string& fallback) {
  read_.insert(key);
  if (!has(key)) return fallback;
  const Json& v = section_->at(key);
  if (v.is_string()) return v.get<std::string>();
  fail(key, "expected a string");
}

std::string ConfigSection::get_choice(const std::string& key, const std::string& fallback,
                                      std::initializer_list<const char*> allowed) {
  const std::string value = get_string(key, fallback);
  std::string list;
  for (const char* a : allowed) {
    if (value == a) return value;
    list += (list.empty() ? "" : ", ") + std::string(a);
  }
  fail(key, "allowed values: " + list);
}

const Json* ConfigSection::get_raw(const std::string& key) {
  read_.insert(key);
  return has(key) ? &section_->at(key) : nullptr;
}

ConfigSection ConfigSection::subsection(const std::string& key) {
  read_.insert(key);
  return ConfigSection(has(key) ? &section_->at(key) : nullptr, full_key(key));
}

void ConfigSection::finish() const {
  if (!section_) return;
  for (auto it = section_->begin(); it != section_->end(); ++it) {
    if (read_.count(it.key())) continue;
    std::string known;
    for (const auto& k : read_) known += (known.empty() ? "" : ", ") + k;
    throw_error("config: unknown key ", full_key(it.key()), " (known keys in ",
                path_.empty() ? "the top level" : "[" + path_ + "]", ": ", known, ")");
  }
}

}  // namespace scalelab
