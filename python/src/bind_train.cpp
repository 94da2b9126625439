// scalelab.train: the Trainer of `scalelab train`, with the GIL released while it runs. Every
// metrics record (train and valid, the JSON of metrics.jsonl) goes through the Trainer's
// MetricsSink to a Python callable. From the moment the GIL is released to the return, SIGINT
// asks the Trainer to stop after the step in progress, as the command line's handler does, so the
// checkpoint holds that step; a SIGINT before the first step (while the data loads and the model
// is built) stops before anything is written.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <csignal>
#include <iostream>
#include <string>
#include <thread>
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

// Replaces Python's SIGINT handler for the duration of a run (Python delivers signals to its
// main thread, so only a call from there installs it) and puts it back after. A SIGINT the
// process ignores (a background job of a script) stays ignored, as in the command line.
class SigintDuringRun {
 public:
  explicit SigintDuringRun(bool wanted) {
    struct sigaction current {};
    sigaction(SIGINT, nullptr, &current);
    installed_ = wanted && current.sa_handler != SIG_IGN;
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
  bool installed() const { return installed_; }
  SigintDuringRun(const SigintDuringRun&) = delete;
  SigintDuringRun& operator=(const SigintDuringRun&) = delete;

 private:
  bool installed_ = false;
  struct sigaction previous_ {};
};

// The tests' way to deliver a SIGINT at a named moment of train() ("before_load",
// "before_construction", "before_run", "after_run"): kill() to the process (the way a terminal's
// Ctrl-C arrives), then wait until the handler has run, so the test does not depend on timing;
// "before_handler": while Python's handler still has SIGINT. Fires once; empty: never.
std::string& sigint_test_point() {
  static std::string point;
  return point;
}

void maybe_signal_at(const char* point, const SigintDuringRun& sigint) {
  if (sigint_test_point() != point) return;
  sigint_test_point().clear();
  kill(getpid(), SIGINT);
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (sigint.installed() && stopped_by_signal == 0 && std::chrono::steady_clock::now() < give_up)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

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

Json summary_json(const TrainSummary& s, bool started) {
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
          {"started", started},
          {"interrupted", s.interrupted || !started},
          {"stopped_by_signal", stopped_by_signal != 0}};
}

std::string train(const std::string& tree_json, bool resume, nb::object on_record, bool handle_sigint,
                  bool progress) {
  const RunConfig config = parse_config_text(tree_json);
  PythonSink sink(std::move(on_record));
  nb::gil_scoped_release release;
  ExclusiveCall call("train");
  stop_flag = 0;
  stopped_by_signal = 0;
  if (sigint_test_point() == "before_handler") {
    // As a SIGINT that Python's handler took: the same flag, set synchronously.
    sigint_test_point().clear();
    PyErr_SetInterrupt();
  }
  const SigintDuringRun sigint(handle_sigint);
  if (sigint.installed()) {
    // A Ctrl-C that came before the handler went in (while Python's handler had it, up to a
    // moment ago) waits in Python as a pending signal: it counts as one before the first step.
    nb::gil_scoped_acquire gil;
    if (PyErr_CheckSignals() != 0) {
      if (!PyErr_ExceptionMatches(PyExc_KeyboardInterrupt)) throw nb::python_error();
      PyErr_Clear();
      stopped_by_signal = 1;
    }
  }
  if (stopped_by_signal != 0) return summary_json(TrainSummary{}, /*started=*/false).dump();
  maybe_signal_at("before_load", sigint);
  const TaskData data = load_task(config.data);
  maybe_signal_at("before_construction", sigint);
  Trainer trainer(config, data);
  maybe_signal_at("before_run", sigint);
  // Stopped before the first step: the run directory is not touched (a fresh run leaves none).
  if (stopped_by_signal != 0) return summary_json(TrainSummary{}, /*started=*/false).dump();
  const TrainSummary s = trainer.run({.resume = resume,
                                      .progress = progress ? &std::cerr : nullptr,
                                      .sink = &sink,
                                      .stop_requested = &stop_flag});
  maybe_signal_at("after_run", sigint);
  return summary_json(s, /*started=*/true).dump();
}

}  // namespace

void bind_train(nb::module_& m) {
  m.def("train", &train, nb::arg("tree_json"), nb::arg("resume"), nb::arg("on_record"),
        nb::arg("handle_sigint"), nb::arg("progress"),
        "Trains as `scalelab train`; on_record(record_json) -> stop is called for every metrics "
        "record. Returns the summary as JSON.");
  m.def(
      "_sigint_at",
      [](const std::string& point) {
        static const std::vector<std::string> points = {"before_handler", "before_load", "before_construction",
                                                        "before_run", "after_run"};
        if (std::find(points.begin(), points.end(), point) == points.end())
          throw std::invalid_argument("_sigint_at: unknown point '" + point +
                                      "' (before_handler, before_load, before_construction, before_run, after_run)");
        sigint_test_point() = point;
      },
      nb::arg("point"),
      "Tests only: the next train() sends this process a SIGINT at `point` (before_handler, "
      "before_load, before_construction, before_run, after_run) and waits for the handler.");
}

}  // namespace scalelab::python
