// scalelab: every scale in a Transformer is a knob; this is the command line.
#include <iostream>
#include <new>

#include "commands.hpp"
#include "scalelab/core/error.hpp"

int main(int argc, char** argv) {
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
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const scalelab::Error& e) {
    std::cerr << "scalelab: error: " << e.what() << "\n";
    return 1;
  } catch (const std::bad_alloc&) {
    // Sizes are checked before allocation (config limits, file sizes); this is what is left:
    // a model or batch that passes the checks but not the machine's free memory.
    std::cerr << "scalelab: error: out of memory (std::bad_alloc): reduce the model, batch or data sizes\n";
    return 1;
  } catch (const std::exception& e) {
    // The catch-all: every known bad input has its own message (docs/robustness.md); whatever
    // escapes still ends as one line and a non-zero exit, never an abort.
    std::cerr << "scalelab: error: " << e.what() << "\n";
    return 1;
  }
  return scalelab::cli::exit_status;
}
