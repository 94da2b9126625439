#include "scalelab/ledger/earlier_claims.hpp"

#include <algorithm>

#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <ostream>
#include <sstream>
#include <vector>

#include "scalelab/ledger/claim.hpp"

namespace fs = std::filesystem;

namespace scalelab::ledger {
namespace {

// The summary ledger.json gives a claim (as run_check writes it), from its claims/<ID>.json;
// nullopt if the file cannot be read or lacks a field of the summary.
std::optional<Json> summary_of_record(const fs::path& path, const std::string& id) {
  std::error_code ec;
  if (fs::symlink_status(path, ec).type() != fs::file_type::regular) return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  const Json record = Json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (!record.is_object() || record.value("id", Json()) != id) return std::nullopt;
  for (const char* name : {"statement", "verdict", "condition"})
    if (!record.contains(name) || !record[name].is_string()) return std::nullopt;
  if (!record.contains("provisional") || !record["provisional"].is_boolean()) return std::nullopt;
  const Json key_number = record.value("key_number", Json());
  if (!key_number.is_null() && !key_number.is_object()) return std::nullopt;
  return Json{{"id", id}, {"statement", record["statement"]}, {"verdict", record["verdict"]},
              {"condition", record["condition"]}, {"provisional", record["provisional"]},
              {"key_number", key_number}, {"sentence", record.value("sentence", Json())}};
}

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

}  // namespace

void keep_earlier_claims(const std::string& out, Json& ledger, std::ostream* progress) {
  std::map<std::string, Json> now;
  for (const Json& c : ledger["claims"]) now.emplace(c["id"].get<std::string>(), c);
  Json merged = Json::array();
  std::vector<std::string> kept, unreadable;
  for (const Claim& claim : all_claims()) {
    const std::string& id = claim.info.id;
    if (auto it = now.find(id); it != now.end()) {
      merged.push_back(it->second);
      continue;
    }
    const fs::path path = fs::path(out) / "claims" / (id + ".json");
    std::error_code ec;
    if (!fs::exists(fs::symlink_status(path, ec))) continue;
    if (std::optional<Json> summary = summary_of_record(path, id)) {
      merged.push_back(std::move(*summary));
      kept.push_back(id);
    } else {
      unreadable.push_back("claims/" + id + ".json");
    }
  }
  // This run's user claims (claim files) follow the built-in ones, in the order they ran.
  for (const Json& c : ledger["claims"]) {
    const std::string id = c["id"].get<std::string>();
    if (std::none_of(all_claims().begin(), all_claims().end(), [&](const Claim& b) { return b.info.id == id; }))
      merged.push_back(c);
  }
  ledger["claims"] = std::move(merged);
  ledger["earlier_claims"] = kept;
  if (!progress || (kept.empty() && unreadable.empty())) return;
  *progress << "scalelab check: ";
  if (!kept.empty())
    *progress << "ledger.json also lists " << joined(kept) << " from an earlier check into this directory "
              << "(not re-checked now; their claims/<ID>.json are as that check wrote them)";
  if (!unreadable.empty())
    *progress << (kept.empty() ? "" : "; ") << "not listed in ledger.json: " << joined(unreadable)
              << " (not a claim record this version reads)";
  *progress << "\n";
}

}  // namespace scalelab::ledger
