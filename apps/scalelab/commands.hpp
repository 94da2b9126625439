// The scalelab command line: one function per subcommand registers its options and its action.
#pragma once
#include <CLI/CLI.hpp>

#include "scalelab/core/comm.hpp"

namespace scalelab::cli {

// The process exit status when a command ends without an Error but not plainly (scalelab train
// stopped by SIGINT / SIGTERM: 128 + the signal number, as a shell reports it).
inline int exit_status = 0;

// A float option in [lo, hi]. CLI::Range lets nan through (every comparison with it is false);
// this one refuses nan and inf too, naming the value.
inline CLI::Validator finite_range(double lo, double hi) {
  return CLI::Validator(
      [lo, hi](std::string& text) -> std::string {
        double v = 0;
        if (!CLI::detail::lexical_cast(text, v)) return "Value " + text + " is not a number";
        if (!(v >= lo && v <= hi))  // false for nan
          return "Value " + text + " not in range " + std::to_string(lo) + " to " + std::to_string(hi);
        return std::string();
      },
      "FLOAT in [" + std::to_string(lo) + " - " + std::to_string(hi) + "]");
}
// The G2P search options shared by eval, g2p and distill: --beam (1 = greedy) and
// --length-penalty (the GNMT alpha).
inline void add_search_options(CLI::App* cmd, int64_t& beam, double& length_penalty) {
  cmd->add_option("--beam", beam, "G2P: beam size (1 = greedy decoding)")
      ->check(CLI::Range(int64_t{1}, int64_t{64}))
      ->capture_default_str();
  cmd->add_option("--length-penalty", length_penalty,
                  "G2P: alpha of the GNMT length penalty ((5+n)/6)^alpha (0 = none)")
      ->check(finite_range(0.0, 10.0))
      ->capture_default_str();
}
// The job's ranks (main sets it before parsing: MPI_COMM_WORLD under mpirun, else one process).
// Only train and check use more than one rank; rank 0 alone prints and writes.
inline Comm* world = nullptr;

void add_train(CLI::App& app);
void add_init(CLI::App& app);
void add_logits(CLI::App& app);
void add_gradients(CLI::App& app);
void add_info(CLI::App& app);
void add_presets(CLI::App& app);
void add_eval(CLI::App& app);
void add_g2p(CLI::App& app);
void add_sample(CLI::App& app);
void add_probe(CLI::App& app);
void add_average(CLI::App& app);
void add_report(CLI::App& app);
void add_check(CLI::App& app);
void add_baseline(CLI::App& app);
void add_distill(CLI::App& app);
void add_agree(CLI::App& app);

}  // namespace scalelab::cli
