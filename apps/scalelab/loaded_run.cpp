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
  run.data = load_task(run.config.data);
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

std::string task_label(const DataConfig& data) {
  return data.kind() == TaskKind::synthetic ? "synthetic (" + data.task + ")" : data.task;
}

}  // namespace scalelab::cli
