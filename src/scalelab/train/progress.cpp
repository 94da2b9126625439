#include "scalelab/train/progress.hpp"

#include <iomanip>
#include <ostream>
#include <sstream>

namespace scalelab {

std::string format_duration(double seconds) {
  const int64_t s = static_cast<int64_t>(seconds + 0.5);
  std::ostringstream out;
  if (s >= 3600) out << s / 3600 << "h" << std::setw(2) << std::setfill('0') << (s % 3600) / 60 << "m";
  else if (s >= 60) out << s / 60 << "m" << std::setw(2) << std::setfill('0') << s % 60 << "s";
  else out << s << "s";
  return out.str();
}

void TrainProgress::header(const ProgressHeader& h) {
  if (!out_) return;
  *out_ << "scalelab train: " << h.parameters << " parameters, " << h.examples
        << " training examples, run dir " << h.run_dir
        << (h.ranks > 1 ? ", " + std::to_string(h.ranks) + " ranks (data parallel)" : "")
        << (h.resume ? " (resuming from step " + std::to_string(h.start_step) + ")" : "") << "\n";
  if (h.steps_changed) {
    *out_ << "note: train.steps changed from " << h.saved_steps << " to " << total_steps_
          << ": the cosine decay is recomputed over the new total from step " << h.start_step + 1
          << "\n";
  }
}

// The stream's format state carries over from line to line (as it always has): the manipulators
// below are the whole of it.
void TrainProgress::record(const Json& rec) {
  if (!out_) return;
  std::ostream& out = *out_;
  const int64_t step = rec["step"].get<int64_t>();
  if (rec["split"] == "valid") {
    out << "valid step " << step << ": loss " << std::fixed << std::setprecision(4)
        << rec["nll"].get<double>() << " nats, token accuracy " << rec["token_accuracy"].get<double>();
    if (rec.contains("exact_match")) out << ", exact match " << rec["exact_match"].get<double>();
    out << std::defaultfloat << "\n";
    return;
  }
  const double elapsed = rec["time_s"].get<double>();
  const double eta = elapsed / double(step - start_step_) * double(total_steps_ - step);
  out << "step " << step << "/" << total_steps_ << "  loss " << std::fixed << std::setprecision(4)
      << rec["loss"].get<double>() << "  lr " << std::scientific << std::setprecision(2)
      << rec["lr"].get<double>() << std::fixed << "  tok/s " << std::setprecision(0)
      << rec["tokens_per_s"].get<double>() << "  ETA " << format_duration(eta) << std::defaultfloat;
  if (rec.contains("loss_scale")) {
    out << "  scale " << rec["loss_scale"].get<double>() << "  skipped "
        << rec["skipped_steps"].get<int64_t>();
  }
  out << "\n";
}

}  // namespace scalelab
