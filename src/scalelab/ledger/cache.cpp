#include "scalelab/ledger/cache.hpp"

#include <filesystem>
#include <fstream>
#include <ostream>
#include <sstream>

#include "scalelab/core/atomic_file.hpp"

namespace scalelab::ledger {

std::string RunCache::path(const std::string& key) const {
  return (std::filesystem::path(dir_) / (key + ".json")).string();
}

std::optional<Json> RunCache::find(const std::string& key, std::ostream* warnings) const {
  const std::string p = path(key);
  std::ifstream in(p, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  const Json j = Json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object() || j.value("key", "") != key || !j.contains("result") ||
      !j["result"].is_object()) {
    if (warnings) *warnings << "scalelab check: cache entry " << p << " is corrupt; running it again\n";
    return std::nullopt;
  }
  return j["result"];
}

void RunCache::store(const std::string& key, const std::string& label, const Json& result) const {
  write_file_atomically(path(key), Json{{"key", key}, {"label", label}, {"result", result}}.dump() + "\n");
}

}  // namespace scalelab::ledger
