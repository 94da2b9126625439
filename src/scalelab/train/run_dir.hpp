// train/run_dir: a training run's directory (train.run_dir) and every file Trainer writes there.
//
//   config.toml, config.json      the resolved config (every default filled in)
//   metrics.jsonl                 one line per record (train/metrics_sink.hpp)
//   checkpoint.safetensors        the latest weights + optimizer state (Trainer::save)
//   snapshots/stepN.safetensors   weights only, every train.snapshot_every steps
//   summary.json                  the final figures
//
// The checks come before the first write, so that a refused command leaves the directory as it
// was. Only a writing RunDirectory touches the disk: data parallel, rank 0 alone writes; a run
// without a directory (TrainerOptions::write_run_dir = false) writes nothing at all.
#pragma once
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "scalelab/model/transformer.hpp"
#include "scalelab/train/metrics_sink.hpp"

namespace scalelab {

class RunDirectory : public MetricsSink {
 public:
  // run_dir: train.run_dir. on_disk: the run has a directory; writes: this process writes it.
  RunDirectory(const std::string& run_dir, bool on_disk, bool writes);

  bool on_disk() const { return on_disk_; }
  std::string checkpoint_path() const;
  // A fresh start: refuses a directory that holds a run (a checkpoint, or snapshots someone may
  // still average). A metrics.jsonl without a checkpoint is what a run that failed before its
  // first checkpoint left, and start() replaces it.
  void check_fresh() const;
  // A resume: the checkpoint must be there.
  void check_resumable() const;
  // Resume: drops the records of steps after last_step (written by a run that went on past its
  // last checkpoint and was interrupted) and a torn last line; rewritten atomically, if needed.
  void trim_metrics(int64_t last_step) const;

  // Creates the directory.
  void create() const;
  // Writes config.toml and config.json, and opens metrics.jsonl (appending on a resume).
  void start(const Json& resolved, bool resume);
  // One line of metrics.jsonl, flushed.
  void record(const Json& rec) override;
  void write_snapshot(Transformer<float>& model, const Json& resolved, int64_t step) const;
  void write_summary(const Json& summary) const;

 private:
  std::string run_dir_;
  std::filesystem::path dir_;
  bool on_disk_, writes_;
  std::ofstream metrics_;
};

}  // namespace scalelab
