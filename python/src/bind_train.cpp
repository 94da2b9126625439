// scalelab.train: the Trainer of `scalelab train`, with the GIL released while it runs. Every
// metrics record (train and valid, the JSON of metrics.jsonl) goes through the Trainer's
// MetricsSink to a Python callable; SIGINT during the run asks the Trainer to stop after the step
// in progress, as the command line's handler does, so the checkpoint holds that step.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <csignal>
#include <iostream>
#include <vector>

#include "bindings.hpp"
#include "exclusive_call.hpp"
#include "scalelab/train/trainer.hpp"

namespace nb = nanobind;

namespace scalelab::python {

namespace {

// Set by the SIGINT handler or by a callback that asks to stop; polled by the Trainer after
// every step. One training run at a time (ExclusiveCall), so one flag serves.
volatile std::sig_atomic_t stop_flag = 0;
volatile std::sig_atomic_t stopped_by_signal = 0;

extern "C" void on_sigint(int) {
  stop_flag = 1;
  stopped_by_signal = 1;
}

// Replaces Python's SIGINT handler for the duration of a run (main thread only: Python delivers
// signals there) and puts it back after.
class SigintDuringRun {
 public:
  explicit SigintDuringRun(bool install) : installed_(install) {
    if (!installed_) return;
    struct sigaction sa {};
    sa.sa_handler = on_sigint;
    // SA_RESTART: a slow system call the signal interrupts (a read or wait that can block) is
    // resumed instead of failing with EINTR, so the stop happens only where the Trainer polls.
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &previous_);
  }
  ~SigintDuringRun() {
    if (installed_) sigaction(SIGINT, &previous_, nullptr);
  }
  SigintDuringRun(const SigintDuringRun&) = delete;
  SigintDuringRun& operator=(const SigintDuringRun&) = delete;

 private:
  bool installed_;
  struct sigaction previous_ {};
};

// Hands each record to `on_record` (JSON text -> bool "stop"), taking the GIL for the call.
class PythonSink : public MetricsSink {
 public:
  explicit PythonSink(nb::object on_record) : on_record_(std::move(on_record)) {}
  void record(const Json& rec) override {
    const std::string text = rec.dump();
    nb::gil_scoped_acquire gil;
    bool stop = true;
    try {
      stop = nb::cast<bool>(on_record_(text));
    } catch (nb::python_error& e) {  // the wrapper keeps the callback's own errors; this is a bug
      e.discard_as_unraisable("scalelab.train: the record handler");
    }
    if (stop) stop_flag = 1;
  }

 private:
  nb::object on_record_;
};

Json summary_json(const TrainSummary& s) {
  return {{"steps", s.steps},
          {"skipped_steps", s.skipped_steps},
          {"final_train_loss", s.final_train_loss},
          {"valid",
           {{"loss", s.valid.loss},
            {"nll", s.valid.nll},
            {"token_accuracy", s.valid.token_accuracy},
            {"exact_match", s.valid.exact_match},
            {"tokens", s.valid.tokens}}},
          {"seconds", s.seconds},
          {"tokens_per_second", s.tokens_per_second},
          {"parameters", s.parameters},
          {"interrupted", s.interrupted},
          {"stopped_by_signal", s.interrupted && stopped_by_signal != 0}};
}

std::string train(const std::string& tree_json, bool resume, nb::object on_record, bool handle_sigint,
                  bool progress) {
  const RunConfig config = parse_config_text(tree_json);
  PythonSink sink(std::move(on_record));
  nb::gil_scoped_release release;
  ExclusiveCall call("train");
  const TaskData data = load_task(config.data);
  Trainer trainer(config, data);
  stop_flag = 0;
  stopped_by_signal = 0;
  const SigintDuringRun sigint(handle_sigint);
  const TrainSummary s = trainer.run({.resume = resume,
                                      .progress = progress ? &std::cerr : nullptr,
                                      .sink = &sink,
                                      .stop_requested = &stop_flag});
  return summary_json(s).dump();
}

}  // namespace

void bind_train(nb::module_& m) {
  m.def("train", &train, nb::arg("tree_json"), nb::arg("resume"), nb::arg("on_record"),
        nb::arg("handle_sigint"), nb::arg("progress"),
        "Trains as `scalelab train`; on_record(record_json) -> stop is called for every metrics "
        "record. Returns the summary as JSON.");
}

}  // namespace scalelab::python
