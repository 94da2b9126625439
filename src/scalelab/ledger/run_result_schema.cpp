#include "scalelab/ledger/run_result_schema.hpp"

#include <cmath>
#include <functional>
#include <initializer_list>

#include "scalelab/core/quote.hpp"

namespace scalelab::ledger {
namespace {

// A problem found at a path of the result; thrown to end the walk at the first one.
struct Problem {
  std::string text;
};

[[noreturn]] void fail(const std::string& path, const Json& value, const std::string& expected) {
  throw Problem{path + " = " + quote_for_message(value.dump(), 60) + ": expected " + expected};
}

bool is_integer(const Json& v) {
  if (v.is_number_integer()) return true;
  if (!v.is_number_float()) return false;
  const double d = v.get<double>();
  return std::isfinite(d) && std::floor(d) == d;
}

void integer(const std::string& path, const Json& v) {
  if (!is_integer(v)) fail(path, v, "an integer");
}
void number_or_null(const std::string& path, const Json& v) {
  if (!(v.is_null() || v.is_number())) fail(path, v, "a number or null");
}
void finite_number(const std::string& path, const Json& v) {
  if (!v.is_number() || !std::isfinite(v.get<double>())) fail(path, v, "a finite number");
}
void text(const std::string& path, const Json& v) {
  if (!v.is_string()) fail(path, v, "a string");
}
void boolean(const std::string& path, const Json& v) {
  if (!v.is_boolean()) fail(path, v, "true or false");
}
void object(const std::string& path, const Json& v) {
  if (!v.is_object()) fail(path, v, "an object");
}

// A required field of an object.
const Json& field(const std::string& path, const Json& object, const char* name) {
  if (!object.contains(name)) throw Problem{(path.empty() ? "" : path + ".") + name + ": missing"};
  return object.at(name);
}
std::string child(const std::string& path, const char* name) {
  return path.empty() ? name : path + "." + name;
}

// An array whose every element is checked by `each(path, element)`.
void array_of(const std::string& path, const Json& v,
              const std::function<void(const std::string&, const Json&)>& each) {
  if (!v.is_array()) fail(path, v, "an array");
  for (size_t i = 0; i < v.size(); ++i) each(path + "[" + std::to_string(i) + "]", v[i]);
}

// A fixed-length row: one checker per column.
using Column = void (*)(const std::string&, const Json&);
void row(const std::string& path, const Json& v, std::initializer_list<Column> columns) {
  if (!v.is_array() || v.size() != columns.size())
    fail(path, v, "an array of " + std::to_string(columns.size()) + " values");
  size_t i = 0;
  for (Column c : columns) {
    c(path + "[" + std::to_string(i) + "]", v[i]);
    ++i;
  }
}

void check_train(const Json& r) {
  boolean("diverged", field("", r, "diverged"));
  integer("diverged_step", field("", r, "diverged_step"));
  number_or_null("final_valid_nll", field("", r, "final_valid_nll"));
  number_or_null("final_train_loss", field("", r, "final_train_loss"));
  if (r.contains("final_valid_accuracy")) number_or_null("final_valid_accuracy", r["final_valid_accuracy"]);
  if (r.contains("error")) text("error", r["error"]);
  finite_number("seconds", field("", r, "seconds"));
  // [step, loss, grad_norm] and [step, nll, token_accuracy]
  array_of("curve", field("", r, "curve"),
           [](const std::string& p, const Json& v) { row(p, v, {integer, number_or_null, number_or_null}); });
  array_of("valid", field("", r, "valid"),
           [](const std::string& p, const Json& v) { row(p, v, {integer, number_or_null, number_or_null}); });
  array_of("observations", field("", r, "observations"), [](const std::string& p, const Json& o) {
    object(p, o);
    integer(child(p, "step"), field(p, o, "step"));
    if (o.contains("loss")) number_or_null(child(p, "loss"), o["loss"]);
    // [stack, layer, ||g||]
    array_of(child(p, "grad_layers"), field(p, o, "grad_layers"), [](const std::string& q, const Json& v) {
      row(q, v, {text, integer, number_or_null});
    });
    // [stack, layer, site, max|logit|, entropy_norm, saturated, logit variance, share in [-3, 3]]
    array_of(child(p, "attn"), field(p, o, "attn"), [](const std::string& q, const Json& v) {
      row(q, v, {text, integer, text, number_or_null, number_or_null, number_or_null,
                 number_or_null, number_or_null});
    });
  });
  if (r.contains("rounding")) {
    object("rounding", r["rounding"]);
    for (const auto& [op, counts] : r["rounding"].items()) {
      const std::string p = "rounding." + op;
      object(p, counts);
      for (const auto& [name, count] : counts.items()) finite_number(p + "." + name, count);
    }
  }
  if (r.contains("skipped_steps")) integer("skipped_steps", r["skipped_steps"]);
}

void check_probe_record(const std::string& p, const Json& rec) {
  object(p, rec);
  const Json& schema = field(p, rec, "schema");
  if (!(is_integer(schema) && schema.get<double>() == 1)) fail(child(p, "schema"), schema, "1");
  for (const char* name : {"probe", "stack", "site"}) text(child(p, name), field(p, rec, name));
  for (const char* name : {"layer", "head", "seed", "step"}) integer(child(p, name), field(p, rec, name));
  const Json& values = field(p, rec, "values");
  object(child(p, "values"), values);
  for (const auto& [name, v] : values.items()) number_or_null(child(p, "values") + "." + name, v);
  if (rec.contains("histograms")) {
    object(child(p, "histograms"), rec["histograms"]);
    for (const auto& [name, h] : rec["histograms"].items()) {
      const std::string q = child(p, "histograms") + "." + name;
      object(q, h);
      const Json& edges = field(q, h, "edges");
      array_of(child(q, "edges"), edges, finite_number);
      for (size_t i = 1; i < edges.size(); ++i)
        if (!(edges[i].get<double>() > edges[i - 1].get<double>()))
          fail(child(q, "edges"), edges, "increasing numbers");
      array_of(child(q, "counts"), field(q, h, "counts"), integer);
      if (edges.size() < 2 || edges.size() != h["counts"].size() + 1)
        throw Problem{q + ": " + std::to_string(edges.size()) + " edges for " +
                      std::to_string(h["counts"].size()) + " counts (expected one edge more, at least 2)"};
      for (const char* name : {"below", "above", "nan"})
        if (h.contains(name)) integer(child(q, name), h[name]);
    }
  }
  if (rec.contains("tags")) {
    object(child(p, "tags"), rec["tags"]);
    for (const auto& [name, v] : rec["tags"].items()) text(child(p, "tags") + "." + name, v);
  }
}

void check_probe(const Json& r) {
  array_of("records", field("", r, "records"), check_probe_record);
  number_or_null("first_step_lr", field("", r, "first_step_lr"));
}

}  // namespace

std::optional<std::string> run_result_problem(RunKind kind, const Json& result) {
  try {
    object("result", result);
    if (kind == RunKind::train) check_train(result);
    else check_probe(result);
  } catch (const Problem& p) {
    return p.text;
  }
  return std::nullopt;
}

}  // namespace scalelab::ledger
