// scalelab.check, scalelab.report and scalelab.probe: the claims ledger (ledger/check.hpp), its
// report (report/write_report.hpp) and the probe experiment (probes/probe_run.hpp), called as the
// command line calls them, with the GIL released. Progress lines of check go to a Python callable.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <optional>
#include <ostream>
#include <streambuf>

#include "bindings.hpp"
#include "exclusive_call.hpp"
#include "scalelab/core/parallel.hpp"
#include "scalelab/ledger/check.hpp"
#include "scalelab/probes/probe_run.hpp"
#include "scalelab/report/write_report.hpp"
#include "scalelab/train/trainer.hpp"

namespace nb = nanobind;

namespace scalelab::python {

namespace {

// A stream buffer that passes every complete line to a Python callable (taking the GIL; the
// ledger writes progress from its worker threads, one line at a time under its own lock).
class LineToPython : public std::streambuf {
 public:
  explicit LineToPython(nb::object on_line) : on_line_(std::move(on_line)) {}

 protected:
  int overflow(int c) override {
    if (c == traits_type::eof()) return 0;
    if (c == '\n') {
      emit();
    } else {
      line_.push_back(static_cast<char>(c));
    }
    return c;
  }
  int sync() override { return 0; }

 private:
  void emit() {
    nb::gil_scoped_acquire gil;
    try {
      on_line_(line_);
    } catch (nb::python_error& e) {
      e.discard_as_unraisable("scalelab.check: the progress handler");
    }
    line_.clear();
  }
  nb::object on_line_;
  std::string line_;
};

nb::tuple check(bool quick, std::optional<std::vector<std::string>> only, const std::string& out, int64_t jobs,
                int64_t seeds, nb::object on_progress, bool write_html, const std::string& gnuplot) {
  ledger::CheckOptions options;
  options.quick = quick, options.out = out, options.jobs = jobs, options.seeds = seeds;
  if (only) {
    std::string list;
    for (const std::string& id : *only) list += (list.empty() ? "" : ",") + id;
    options.only = ledger::parse_claim_ids(list);  // [] is an error, as --only "" is
  }
  std::optional<LineToPython> lines;
  std::optional<std::ostream> progress;
  if (!on_progress.is_none()) {
    lines.emplace(std::move(on_progress));
    progress.emplace(&*lines);
    options.progress = &*progress;
  }
  ledger::CheckResult r;
  std::string html;
  {
    nb::gil_scoped_release release;
    ExclusiveCall call("check");
    r = ledger::run_check(options);
    if (write_html) html = report::write_report(out, {.gnuplot = gnuplot}).html_path;
  }
  progress.reset();  // with the GIL: the callable is released here
  lines.reset();
  return nb::make_tuple(r.ledger.dump(), r.runs, r.cached_runs, r.seconds, html);
}

nb::dict report_dir(const std::string& dir, const std::string& gnuplot) {
  report::ReportResult r;
  {
    nb::gil_scoped_release release;
    ExclusiveCall call("report");
    r = report::write_report(dir, {.gnuplot = gnuplot});
  }
  nb::dict d;
  d["html_path"] = r.html_path;
  d["markdown_path"] = r.markdown_path;
  d["claims"] = r.claims;
  d["plots_drawn"] = r.plots_drawn;
  d["plots_failed"] = r.plots_failed;
  d["gnuplot_found"] = r.gnuplot_found;
  return d;
}

// As `scalelab probe`: fresh initialisations over seeds (tree_json) or one checkpoint.
std::string probe(const std::string& tree_json, const std::string& checkpoint_path, int64_t seeds,
                  int64_t batches, int64_t batch_size, const std::string& split,
                  const std::string& precision, bool per_head, bool optimizer_step) {
  SL_CHECK(seeds >= 1 && seeds <= 1000, "seeds = ", seeds, ": must be in 1..1000");
  SL_CHECK(batches >= 1 && batches <= 10000, "batches = ", batches, ": must be in 1..10000");
  SL_CHECK(batch_size >= 0 && batch_size <= 100000, "batch_size = ", batch_size,
           ": must be in 1..100000 (0: train.batch_size)");
  SL_CHECK(precision.empty() || precision == "f16" || precision == "bf16", "precision = ", precision,
           ": allowed values: f16, bf16 (or None)");
  std::optional<RunConfig> config;
  if (checkpoint_path.empty()) config = parse_config_text(tree_json);
  nb::gil_scoped_release release;
  ExclusiveCall call("probe");
  std::optional<Checkpoint> checkpoint;
  if (!checkpoint_path.empty()) {
    checkpoint = read_checkpoint(checkpoint_path);
    config = parse_run_config(checkpoint->run_config);
  }
  std::optional<ScopedNumThreads> threads;
  if (config->train.threads > 0) threads.emplace(static_cast<int>(config->train.threads));
  const TaskData data = load_task(config->data);
  config->model = resolve_vocab(config->model, data);
  probes::ProbeRunOptions opt;
  opt.seeds = seeds;
  opt.batches = batches;
  opt.batch_size = batch_size;
  opt.split = split;
  opt.optimizer_step = optimizer_step;
  opt.model.per_head = per_head;
  if (!precision.empty()) opt.precision = parse_dtype(precision);
  const probes::ProbeRunResult run =
      probes::run_probes(*config, data, opt, checkpoint ? &*checkpoint : nullptr);
  Json records = Json::array();
  for (const probes::ProbeRecord& r : run.records) records.push_back(probes::record_to_json(r));
  return records.dump();
}

}  // namespace

void bind_ledger(nb::module_& m) {
  m.def("check", &check, nb::arg("quick"), nb::arg("only").none(), nb::arg("out"), nb::arg("jobs"),
        nb::arg("seeds"), nb::arg("on_progress").none(), nb::arg("write_html"), nb::arg("gnuplot"),
        "Runs the claims ledger as `scalelab check`; returns (ledger_json, runs, cached_runs, "
        "seconds, report_html_path).");
  m.def("report", &report_dir, nb::arg("dir"), nb::arg("gnuplot"),
        "Writes DIR/report.html and DIR/report.md from a check directory, as `scalelab report`.");
  m.def("probe", &probe, nb::arg("tree_json"), nb::arg("checkpoint_path"), nb::arg("seeds"),
        nb::arg("batches"), nb::arg("batch_size"), nb::arg("split"), nb::arg("precision"),
        nb::arg("per_head"), nb::arg("optimizer_step"),
        "The probe records (JSON list) of `scalelab probe` at init over seeds, or of a checkpoint.");
}

}  // namespace scalelab::python
