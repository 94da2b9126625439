#include "scalelab/train/run_dir.hpp"

#include <cerrno>
#include <cstring>
#include <vector>

#include "scalelab/core/atomic_file.hpp"
#include "scalelab/core/error.hpp"
#include "scalelab/model/checkpoint.hpp"
#include "scalelab/train/run_config.hpp"  // json_to_toml

namespace fs = std::filesystem;

namespace scalelab {

RunDirectory::RunDirectory(const std::string& run_dir, bool on_disk, bool writes)
    : run_dir_(run_dir), dir_(run_dir), on_disk_(on_disk), writes_(on_disk && writes) {}

std::string RunDirectory::checkpoint_path() const {
  return (dir_ / "checkpoint.safetensors").string();
}

void RunDirectory::check_fresh() const {
  if (!on_disk_) return;
  SL_CHECK(!fs::exists(checkpoint_path()), "train.run_dir = ", run_dir_,
           ": already holds a run (checkpoint.safetensors); choose another run_dir or pass --resume");
  const fs::path snapshots = dir_ / "snapshots";
  SL_CHECK(!(fs::exists(snapshots) && !fs::is_empty(snapshots)), "train.run_dir = ", run_dir_,
           ": already holds a run (snapshots/, no checkpoint to resume from); choose another "
           "run_dir or move snapshots/ away");
}

void RunDirectory::check_resumable() const {
  SL_CHECK(on_disk_ && fs::exists(checkpoint_path()), "train.run_dir = ", run_dir_,
           ": no checkpoint.safetensors to resume from (the run stopped before its first "
           "checkpoint); start it again without --resume");
}

void RunDirectory::trim_metrics(int64_t last_step) const {
  const std::string path = (dir_ / "metrics.jsonl").string();
  if (!on_disk_ || !fs::exists(path)) return;
  SL_CHECK(fs::is_regular_file(path), path, ": not a regular file");
  std::ifstream in(path);
  SL_CHECK(in, "cannot read ", path, ": ", std::strerror(errno));
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  SL_CHECK(!in.bad(), "cannot read ", path, ": ", std::strerror(errno));
  std::string kept;
  size_t dropped = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    const Json rec = Json::parse(lines[i], nullptr, /*allow_exceptions=*/false);
    const bool valid = rec.is_object() && rec.contains("step") && rec["step"].is_number_integer();
    SL_CHECK(valid || i + 1 == lines.size(), path, ":", i + 1, ": not a metrics record: ", lines[i]);
    if (valid && rec["step"].get<int64_t>() <= last_step) kept += lines[i] + "\n";
    else ++dropped;
  }
  if (dropped > 0) write_file_atomically(path, kept);
}

void RunDirectory::create() const {
  if (writes_) fs::create_directories(dir_);
}

void RunDirectory::start(const Json& resolved, bool resume) {
  if (!writes_) return;
  write_file_atomically((dir_ / "config.toml").string(), json_to_toml(resolved));
  write_file_atomically((dir_ / "config.json").string(), resolved.dump(2) + "\n");
  // A fresh start with a leftover metrics.jsonl (no checkpoint beside it) starts it anew.
  const std::string path = (dir_ / "metrics.jsonl").string();
  metrics_.open(path, resume ? std::ios::app : std::ios::trunc);
  SL_CHECK(metrics_, "cannot open ", path, " for writing: ", std::strerror(errno));
}

void RunDirectory::record(const Json& rec) {
  if (!writes_) return;
  metrics_ << rec.dump() << "\n" << std::flush;
  SL_CHECK(metrics_, "cannot write ", (dir_ / "metrics.jsonl").string(), ": ", std::strerror(errno));
}

void RunDirectory::write_snapshot(Transformer<float>& model, const Json& resolved,
                                  int64_t step) const {
  if (!writes_) return;
  // Weights only (no optimizer state): for scalelab average / eval, not for --resume.
  const fs::path snapshots = dir_ / "snapshots";
  fs::create_directories(snapshots);
  save_checkpoint((snapshots / ("step" + std::to_string(step) + ".safetensors")).string(), model,
                  resolved, step);
}

void RunDirectory::write_summary(const Json& summary) const {
  if (writes_) write_file_atomically((dir_ / "summary.json").string(), summary.dump(2) + "\n");
}

}  // namespace scalelab
