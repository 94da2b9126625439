// scalelab: every scale is a knob; this is the command line.
#include <cstring>
#include <iostream>
#include <memory>
#include <new>

#include "commands.hpp"
#include "scalelab/core/engine_signals.hpp"
#include "scalelab/core/error.hpp"
#include "scalelab/ledger/runs.hpp"

namespace {

// One error line from rank 0. Under MPI the job then ends on every rank: normally when all ranks
// hit the error together (a refused config, a divergence: every rank sees the same numbers), else
// by MPI_Abort after the other ranks had time to arrive (an error on one rank alone, e.g. a write
// that failed on rank 0), with that rank's message.
int report_error(scalelab::Comm* comm, const std::string& message) {
  const int rank = comm ? comm->rank() : 0;
  if (rank == 0) std::cerr << "scalelab: error: " << message << "\n" << std::flush;
  if (!comm || comm->size() == 1 || comm->all_arrive_within(5.0)) return 1;
  if (rank != 0) std::cerr << "scalelab: error: rank " << rank << ": " << message << "\n" << std::flush;
  std::cerr << "scalelab: rank " << rank << ": the other ranks did not stop with it; aborting the job\n"
            << std::flush;
  comm->abort(1);
  return 1;  // not reached
}

// The subcommand word of the command line ("" if none).
std::string subcommand(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (argv[i][0] != '-') return argv[i];
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  std::unique_ptr<scalelab::Comm> comm;
  try {
    comm = scalelab::make_world_comm(&argc, &argv);
  } catch (const std::exception& e) {
    std::cerr << "scalelab: error: " << e.what() << "\n";
    return 1;
  }
  scalelab::cli::world = comm.get();
  const bool root = comm->rank() == 0;
  try {
    if (comm->size() > 1) {
      const std::string cmd = subcommand(argc, argv);
      SL_CHECK(cmd == "train" || cmd == "check", "scalelab ", cmd.empty() ? "(no command)" : cmd,
               " runs in one process: under mpirun only train and check use the ranks (docs/scaling.md)");
      // Same build everywhere (the engine digest; the CPU model may differ between machines).
      std::string build = scalelab::ledger::binary_version();
      build = build.substr(0, build.find(" on "));
      scalelab::require_same_on_all_ranks(*comm, "scalelab build (version and engine digest)", build);
    }
  } catch (const std::exception& e) {
    return report_error(comm.get(), e.what());
  }

  CLI::App app{"scalelab: a Transformer trainer in which every scale is a knob, with probes that "
               "measure what each knob does.",
               "scalelab"};
  app.require_subcommand(1);
  // Bad options get the same single line as every other error.
  app.failure_message([](const CLI::App*, const CLI::Error& e) {
    return std::string("scalelab: error: ") + e.what() + "\n";
  });
  app.set_version_flag("--version", std::string("scalelab ") + SCALELAB_VERSION);
  scalelab::cli::add_train(app);
  scalelab::cli::add_init(app);
  scalelab::cli::add_logits(app);
  scalelab::cli::add_gradients(app);
  scalelab::cli::add_info(app);
  scalelab::cli::add_presets(app);
  scalelab::cli::add_eval(app);
  scalelab::cli::add_g2p(app);
  scalelab::cli::add_sample(app);
  scalelab::cli::add_probe(app);
  scalelab::cli::add_average(app);
  scalelab::cli::add_report(app);
  scalelab::cli::add_check(app);
  scalelab::cli::add_baseline(app);
  scalelab::cli::add_distill(app);
  scalelab::cli::add_agree(app);
  // Every command runs shielded (core/engine_signals.hpp): nearly all of them compute, and a
  // signal handled on a thread inside a oneDNN 2.6 GEMM corrupts the heap. SIGINT / SIGTERM then
  // reach the idle signal thread, which runs the stop handlers of train and report
  // (stop_signals.hpp) or, for the other commands, ends the process as before.
  const scalelab::EngineSignalShield shield;
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (!root) return e.get_exit_code();  // every rank parses the same words; rank 0 prints
    return app.exit(e);
  } catch (const std::bad_alloc&) {
    // Sizes are checked before allocation (config limits, file sizes); this is what is left:
    // a model or batch that passes the checks but not the machine's free memory.
    return report_error(comm.get(), "out of memory (std::bad_alloc): reduce the model, batch or data sizes");
  } catch (const std::exception& e) {
    // The catch-all: every known bad input has its own message (docs/robustness.md); whatever
    // escapes still ends as one line and a non-zero exit, never an abort.
    return report_error(comm.get(), e.what());
  }
  return scalelab::cli::exit_status;
}
