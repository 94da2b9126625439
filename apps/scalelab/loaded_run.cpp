#include "loaded_run.hpp"

#include "scalelab/core/error.hpp"

namespace scalelab::cli {

LoadedRun load_run(const std::string& checkpoint_path) {
  const Checkpoint checkpoint = read_checkpoint(checkpoint_path);
  LoadedRun run;
  try {
    run.config = parse_run_config(checkpoint.run_config);
  } catch (const Error& e) {
    throw_error(checkpoint_path, ": the checkpoint's config is not usable by this build: ", e.what());
  }
  run.step = checkpoint.step;
  // The held-out words and vocabularies; a teacher's targets shaped only the training.
  run.data = load_task(scoring_data_config(run.config.data));
  const ModelConfig& m = run.config.model;
  const bool encdec = m.arch == Architecture::encoder_decoder;
  SL_CHECK(!encdec || run.data.has_source, checkpoint_path, ": model.arch does not fit data.task = ",
           run.config.data.task);
  SL_CHECK(m.tgt_vocab >= run.data.tgt_vocab.size() &&
               (!encdec || m.src_vocab >= run.data.src_vocab.size()),
           checkpoint_path, ": the model's vocabularies (", m.src_vocab, ", ", m.tgt_vocab,
           ") are smaller than the data's (", run.data.src_vocab.size(), ", ",
           run.data.tgt_vocab.size(), "): the data changed since training?");
  run.model = std::make_unique<Transformer<float>>(m);
  load_weights(*run.model, checkpoint);
  return run;
}

namespace {
// The data section of a run without what members may differ in: the phone order (L2R and R2L
// members rescore each other) and the teacher's targets (they shaped only the training).
Json ensemble_data(const LoadedRun& run) {
  Json data = run_config_to_json(run.config)["data"];
  for (const char* key : {"phone_order", "teacher_targets", "teacher_mix"}) data.erase(key);
  return data;
}
}  // namespace

std::vector<LoadedRun> load_ensemble_members(const LoadedRun& first,
                                             const std::vector<std::string>& paths) {
  std::vector<LoadedRun> members;
  const Json data = ensemble_data(first);
  for (size_t i = 1; i < paths.size(); ++i) {
    members.push_back(load_run(paths[i]));
    const Json other = ensemble_data(members.back());
    SL_CHECK(other == data, "ensemble member '", paths[i], "' was trained on data ", other.dump(),
             ", '", paths[0], "' on ", data.dump(),
             ": the members of an ensemble need the same task and split");
  }
  return members;
}

std::string task_label(const DataConfig& data) {
  return data.kind() == TaskKind::synthetic ? "synthetic (" + data.task + ")" : data.task;
}

}  // namespace scalelab::cli
