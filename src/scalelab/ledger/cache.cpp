#include "scalelab/ledger/cache.hpp"

#include <filesystem>
#include <fstream>
#include <ostream>
#include <sstream>
#include <utility>

#include "scalelab/core/atomic_file.hpp"
#include "scalelab/core/quote.hpp"
#include "scalelab/ledger/run_result_schema.hpp"

namespace fs = std::filesystem;

namespace scalelab::ledger {
namespace {

// nlohmann's message without its "[json.exception.parse_error.101] " prefix, capped.
std::string json_reason(const Json::exception& e) {
  std::string what = e.what();
  const size_t end = what.find("] ");
  if (what.rfind("[json.exception.", 0) == 0 && end != std::string::npos) what.erase(0, end + 2);
  if (what.size() > 160) what = what.substr(0, 160) + "…";
  return what;
}

// The entry's result, or the reason it is not to be trusted.
std::optional<Json> read_entry(const std::string& path, const std::string& key,
                               const std::function<std::optional<std::string>(const Json&)>& problem_of,
                               std::string& problem) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    problem = "cannot be opened";
    return std::nullopt;
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) {
    problem = "cannot be read";
    return std::nullopt;
  }
  Json j;
  try {
    j = Json::parse(text.str());
  } catch (const Json::exception& e) {
    problem = "not valid JSON: " + json_reason(e);
    return std::nullopt;
  }
  if (!j.is_object()) {
    problem = std::string("a JSON ") + j.type_name() + ", expected an object";
    return std::nullopt;
  }
  if (!j.contains("key") || j["key"] != key) {
    problem = "key = " + (j.contains("key") ? quote_for_message(j["key"].dump(), 60) : "(missing)") +
              ", expected the file's name \"" + key + "\"";
    return std::nullopt;
  }
  if (!j.contains("result")) {
    problem = "result: missing";
    return std::nullopt;
  }
  if (auto p = problem_of(j["result"])) {
    problem = std::move(*p);
    return std::nullopt;
  }
  return std::move(j["result"]);
}

}  // namespace

std::optional<Json> find_cache_entry(const std::string& path, const std::string& key,
                                     const std::function<std::optional<std::string>(const Json&)>& problem_of,
                                     const std::string& redo, std::ostream* warnings) {
  std::error_code ec;
  const fs::file_status status = fs::symlink_status(path, ec);
  if (ec || status.type() == fs::file_type::not_found) return std::nullopt;
  std::string problem;
  std::optional<Json> result;
  // Never open anything but a regular file: a FIFO would block the check.
  if (status.type() != fs::file_type::regular) problem = "is not a regular file";
  else result = read_entry(path, key, problem_of, problem);
  if (!result && warnings)
    *warnings << "scalelab check: cache entry " << quote_for_message(path, 300) << " is corrupt (" << problem
              << "); " << redo << "\n";
  return result;
}

void store_cache_entry(const std::string& path, const std::string& key, const std::string& label, const Json& result) {
  write_file_atomically(path, Json{{"key", key}, {"label", label}, {"result", result}}.dump() + "\n");
}

std::string RunCache::path(const std::string& key) const {
  return (fs::path(dir_) / (key + ".json")).string();
}

std::optional<Json> RunCache::find(const std::string& key, RunKind kind, std::ostream* warnings) const {
  auto problem_of = [kind](const Json& result) -> std::optional<std::string> {
    if (auto p = run_result_problem(kind, result)) return "result of a " + std::string(run_kind_name(kind)) + " run: " + *p;
    return std::nullopt;
  };
  return find_cache_entry(path(key), key, problem_of, "running it again", warnings);
}

void RunCache::store(const std::string& key, const std::string& label, const Json& result) const {
  store_cache_entry(path(key), key, label, result);
}

}  // namespace scalelab::ledger
