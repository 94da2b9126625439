#include "scalelab/report/ledger_files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include "scalelab/core/error.hpp"
#include "scalelab/report/text.hpp"

namespace scalelab::report {
namespace {

namespace fs = std::filesystem;

// A JSON value quoted in a message: one line, no control bytes, at most about 80 bytes.
std::string shown(const Json& j) {
  return scalelab::quote_for_message(j.dump(-1, ' ', false, Json::error_handler_t::replace), 80);
}

// A string from a file (or a path) quoted in a message.
std::string q(const std::string& s) { return scalelab::quote_for_message(s); }

// A JSON object being read, with its place in the file for messages
// ("claims/A4.json: plots[0].log_x = "yes": expected true or false").
class Reader {
 public:
  Reader(const Json& j, std::string file, std::string path)
      : j_(j), file_(q(file)), path_(std::move(path)) {
    if (!j_.is_object()) fail_here("expected an object, got " + shown(j_));
  }

  bool has(const char* key) const { return j_.contains(key) && !j_.at(key).is_null(); }

  std::string str(const char* key, bool required = false) const {
    if (!has(key)) {
      if (required) fail(key, "missing (required by schema 1)");
      return "";
    }
    const Json& v = j_.at(key);
    if (!v.is_string()) fail(key, "= " + shown(v) + ": expected a string");
    return v.get<std::string>();
  }
  bool boolean(const char* key) const {
    if (!has(key)) return false;
    const Json& v = j_.at(key);
    if (!v.is_boolean()) fail(key, "= " + shown(v) + ": expected true or false");
    return v.get<bool>();
  }
  std::optional<double> number(const char* key) const {
    if (!has(key)) return std::nullopt;
    return as_number(j_.at(key), key);
  }
  double number_or_nan(const char* key) const {
    return number(key).value_or(std::numeric_limits<double>::quiet_NaN());
  }
  // A number; null stands for a value that could not be measured (a diverged run).
  double as_number(const Json& v, const std::string& where) const {
    if (v.is_null()) return std::numeric_limits<double>::quiet_NaN();
    if (!v.is_number()) fail(where, "= " + shown(v) + ": expected a number");
    return v.get<double>();
  }
  // A swept variable: a number, a string, or an object of named numbers (several swept at once).
  std::string swept_value(const char* key) const {
    if (!has(key)) return "";
    const Json& v = j_.at(key);
    if (v.is_number()) return format_number(v.get<double>());
    if (v.is_string()) return v.get<std::string>();
    if (v.is_object()) {
      std::string out;
      for (auto it = v.begin(); it != v.end(); ++it) {
        if (!out.empty()) out += ", ";
        out += it.key() + " ";
        if (it.value().is_number())
          out += format_number(it.value().get<double>());
        else if (it.value().is_string())
          out += it.value().get<std::string>();
        else
          fail(std::string(key) + "." + it.key(), "= " + shown(it.value()) + ": expected a number or a string");
      }
      return out;
    }
    fail(key, "= " + shown(v) + ": expected a number, a string or an object of numbers");
  }
  const Json& array(const char* key) const {
    static const Json empty = Json::array();
    if (!has(key)) return empty;
    const Json& v = j_.at(key);
    if (!v.is_array()) fail(key, "= " + shown(v) + ": expected an array");
    return v;
  }
  const Json& object(const char* key) const {
    static const Json empty = Json::object();
    if (!has(key)) return empty;
    const Json& v = j_.at(key);
    if (!v.is_object()) fail(key, "= " + shown(v) + ": expected an object");
    return v;
  }
  std::vector<double> numbers(const Json& arr, const std::string& where) const {
    if (!arr.is_array()) fail(where, "= " + shown(arr) + ": expected an array of numbers");
    std::vector<double> out;
    for (size_t i = 0; i < arr.size(); ++i)
      out.push_back(as_number(arr[i], where + "[" + std::to_string(i) + "]"));
    return out;
  }
  std::vector<std::string> strings(const char* key) const {
    std::vector<std::string> out;
    const Json& arr = array(key);
    for (size_t i = 0; i < arr.size(); ++i) {
      if (!arr[i].is_string())
        fail(std::string(key) + "[" + std::to_string(i) + "]", "= " + shown(arr[i]) + ": expected a string");
      out.push_back(arr[i].get<std::string>());
    }
    return out;
  }
  Reader child(const Json& v, const std::string& name) const { return Reader(v, file_, join(name)); }

  [[noreturn]] void fail(const std::string& key, const std::string& problem) const {
    throw_error(file_, ": ", q(join(key)), " ", problem);
  }

 private:
  std::string join(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }
  [[noreturn]] void fail_here(const std::string& problem) const {
    throw_error(file_, ": ", path_.empty() ? "top level" : q(path_), ": ", problem);
  }

  const Json& j_;
  std::string file_;
  std::string path_;
};

Verdict parse_verdict(const Reader& r) {
  const std::string v = r.str("verdict", true);
  if (v == "holds") return Verdict::holds;
  if (v == "holds only if") return Verdict::holds_only_if;
  if (v == "does not hold") return Verdict::does_not_hold;
  if (v == "not testable here") return Verdict::not_testable;
  r.fail("verdict", "= " + q(v) + ": expected one of \"holds\", \"holds only if\", \"does not hold\", "
                        "\"not testable here\"");
}

KeyNumber parse_key_number(const Reader& parent) {
  KeyNumber k;
  if (!parent.has("key_number")) return k;
  const Reader r = parent.child(parent.object("key_number"), "key_number");
  k.label = r.str("label");
  k.value = r.number("value");
  k.unit = r.str("unit");
  k.text = r.str("text");
  return k;
}

// Ledger files are JSON of a few megabytes at most; anything far larger is not one.
constexpr off_t kMaxFileBytes = off_t{256} << 20;

// The bytes of a regular file. Anything else is refused before a byte is read: a FIFO (opened
// non-blocking, so a FIFO with no writer cannot stall the report), a device, a directory.
std::string read_regular_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    const int e = errno;
    throw_error(q(path), ": cannot open (", e == ENOENT ? "no such file" : std::strerror(e), ")");
  }
  struct stat st {};
  const bool stat_ok = ::fstat(fd, &st) == 0;
  const auto refuse = [&](const std::string& why) {
    ::close(fd);
    throw_error(q(path), ": ", why);
  };
  if (!stat_ok) refuse(std::string("cannot stat (") + std::strerror(errno) + ")");
  if (S_ISDIR(st.st_mode)) refuse("is a directory, not a JSON file");
  if (!S_ISREG(st.st_mode))
    refuse(std::string("is not a regular file (") + (S_ISFIFO(st.st_mode) ? "a FIFO" : "a device or socket") +
           "); not read");
  if (st.st_size > kMaxFileBytes)
    refuse("holds " + std::to_string(st.st_size) + " bytes, more than the 256 MiB a ledger file may have");
  std::string bytes;
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) refuse(std::string("read failed (") + std::strerror(errno) + ")");
    if (n == 0) break;
    bytes.append(buf, static_cast<size_t>(n));
    if (static_cast<off_t>(bytes.size()) > kMaxFileBytes) refuse("grew beyond 256 MiB while being read");
  }
  ::close(fd);
  return bytes;
}

Json parse_file(const std::string& path) {
  const std::string bytes = read_regular_file(path);
  try {
    return Json::parse(bytes);
  } catch (const Json::parse_error& e) {
    throw_error(q(path), ": not valid JSON: ", scalelab::quote_for_message(e.what(), 200));
  } catch (const Json::exception& e) {  // a number beyond double's range (1e400): out_of_range
    throw_error(q(path), ": not valid JSON: ", scalelab::quote_for_message(e.what(), 200));
  }
}

void check_schema(const Reader& r, const Json& j) {
  const std::optional<double> schema = r.number("schema");
  if (!schema) r.fail("schema", "missing (expected 1)");
  if (*schema != 1) r.fail("schema", "= " + shown(j.at("schema")) + ": this report reads schema 1");
}

PlotSpec parse_plot(const Reader& r) {
  PlotSpec p;
  p.id = r.str("id", true);
  p.title = r.str("title");
  p.kind = r.str("kind", true);
  if (p.kind != "lines" && p.kind != "bars" && p.kind != "heatmap")
    r.fail("kind", "= " + q(p.kind) + ": expected \"lines\", \"bars\" or \"heatmap\"");
  for (char c : p.id)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.'))
      r.fail("id", "= " + q(p.id) + ": plot ids are file names: letters, digits, '-', '_', '.'");
  p.x_label = r.str("x_label");
  p.y_label = r.str("y_label");
  p.log_x = r.boolean("log_x");
  p.log_y = r.boolean("log_y");
  const Json& series = r.array("series");
  for (size_t i = 0; i < series.size(); ++i) {
    const std::string where = "series[" + std::to_string(i) + "]";
    const Reader s = r.child(series[i], where);
    Series out;
    out.label = s.str("label");
    const Json& points = s.array("points");
    for (size_t k = 0; k < points.size(); ++k) {
      const std::string pw = "points[" + std::to_string(k) + "]";
      std::vector<double> pt = s.numbers(points[k], pw);
      if (pt.size() != 2 && pt.size() != 4)
        s.fail(pw, "= " + shown(points[k]) + ": expected [x, y] or [x, y, lo, hi]");
      out.points.push_back(std::move(pt));
    }
    p.series.push_back(std::move(out));
  }
  p.rows = r.strings("rows");
  p.cols = r.strings("cols");
  const Json& matrix = r.array("matrix");
  for (size_t i = 0; i < matrix.size(); ++i)
    p.matrix.push_back(r.numbers(matrix[i], "matrix[" + std::to_string(i) + "]"));
  if (p.kind == "heatmap") {
    if (p.matrix.size() != p.rows.size())
      r.fail("matrix", "has " + std::to_string(p.matrix.size()) + " rows but rows has " +
                           std::to_string(p.rows.size()) + " labels");
    for (size_t i = 0; i < p.matrix.size(); ++i)
      if (p.matrix[i].size() != p.cols.size())
        r.fail("matrix[" + std::to_string(i) + "]", "has " + std::to_string(p.matrix[i].size()) +
                                                        " entries but cols has " +
                                                        std::to_string(p.cols.size()) + " labels");
  }
  if (p.kind == "bars")
    for (const Series& s : p.series)
      for (const auto& pt : s.points)
        if (!(pt[0] >= 0 && pt[0] < static_cast<double>(p.cols.size())))
          r.fail("series", q(s.label) + " has a bar at x = " + std::to_string(pt[0]) +
                               ", not an index into cols (" + std::to_string(p.cols.size()) +
                               " labels)");
  return p;
}

}  // namespace

const char* verdict_text(Verdict v) {
  switch (v) {
    case Verdict::holds: return "holds";
    case Verdict::holds_only_if: return "holds only if";
    case Verdict::does_not_hold: return "does not hold";
    case Verdict::not_testable: return "not testable here";
  }
  return "?";
}

ClaimRecord read_claim(const std::string& path) {
  const Json j = parse_file(path);
  const Reader r(j, path, "");
  check_schema(r, j);
  ClaimRecord c;
  c.file = path;
  c.id = r.str("id", true);
  c.group = r.str("group");
  c.statement = r.str("statement", true);
  c.experiment = r.str("experiment");
  c.criterion = r.str("criterion");
  c.thresholds = r.object("thresholds");
  c.mode = r.str("mode");
  const Json& arms = r.array("arms");
  for (size_t i = 0; i < arms.size(); ++i) {
    const Reader a = r.child(arms[i], "arms[" + std::to_string(i) + "]");
    Arm arm;
    arm.name = a.str("name", true);
    arm.kind = a.str("kind");
    arm.config = a.object("config");
    const std::vector<double> seeds = a.numbers(a.array("seeds"), "seeds");
    for (size_t k = 0; k < seeds.size(); ++k) {
      // Converting anything else to an integer is undefined; a seed is a whole number anyway.
      if (!(std::fabs(seeds[k]) <= 9007199254740992.0 && seeds[k] == std::floor(seeds[k])))
        a.fail("seeds[" + std::to_string(k) + "]", "= " + format_number(seeds[k]) + ": expected an integer within +-2^53");
      arm.seeds.push_back(static_cast<int64_t>(seeds[k]));
    }
    c.arms.push_back(std::move(arm));
  }
  const Json& ms = r.array("measurements");
  for (size_t i = 0; i < ms.size(); ++i) {
    const Reader m = r.child(ms[i], "measurements[" + std::to_string(i) + "]");
    Measurement out;
    out.name = m.str("name", true);
    out.arm = m.str("arm");
    out.x = m.swept_value("x");
    out.unit = m.str("unit");
    out.values = m.numbers(m.array("values"), "values");
    if (const auto f = m.number("failed")) out.failed = static_cast<int64_t>(*f);
    out.median = m.number_or_nan("median");
    out.min = m.number_or_nan("min");
    out.max = m.number_or_nan("max");
    c.measurements.push_back(std::move(out));
  }
  const Json& plots = r.array("plots");
  for (size_t i = 0; i < plots.size(); ++i)
    c.plots.push_back(parse_plot(r.child(plots[i], "plots[" + std::to_string(i) + "]")));
  c.facts = r.object("facts");
  c.verdict = parse_verdict(r);
  c.condition = r.str("condition");
  c.reason = r.str("reason");
  c.provisional = r.boolean("provisional");
  c.sentence = r.str("sentence");
  c.key_number = parse_key_number(r);
  c.seconds = r.number("seconds");
  const Json& parts = r.array("parts");
  for (size_t i = 0; i < parts.size(); ++i) {
    const Reader p = r.child(parts[i], "parts[" + std::to_string(i) + "]");
    c.parts.push_back({p.str("name", true), p.str("statement"), parse_verdict(p), p.str("condition"),
                       p.str("reason"), p.str("sentence")});
  }
  if (r.has("robustness")) {
    const Reader rb = r.child(r.object("robustness"), "robustness");
    c.marginal = rb.boolean("flips");
    // The verdict a seed shift reads when it differs from the claim's own.
    for (const char* side : {"moved_down", "moved_up"})
      if (c.marginal && c.marginal_reads.empty() && rb.has(side)) {
        const Reader m = rb.child(rb.object(side), side);
        const Verdict v = parse_verdict(m);
        if (v != c.verdict) c.marginal_reads = verdict_text(v);
      }
  }
  if (r.has("sensitivity")) {
    const Reader s = r.child(r.object("sensitivity"), "sensitivity");
    c.sensitivity = SensitivityRecord{parse_verdict(s), s.str("condition"), s.str("reason"), s.str("sentence"),
                                      parse_key_number(s)};
  }
  return c;
}

namespace {
std::optional<double> claim_number(const Ledger& ledger, const std::string& id, Json ClaimRecord::*section,
                                   const std::string& name) {
  auto it = ledger.claims.find(id);
  if (it == ledger.claims.end()) return std::nullopt;
  const Json& values = it->second.*section;
  if (!values.is_object() || !values.contains(name) || !values[name].is_number()) return std::nullopt;
  const double v = values[name].get<double>();
  return std::isfinite(v) ? std::optional<double>(v) : std::nullopt;
}
}  // namespace

std::optional<double> fact_number(const Ledger& ledger, const std::string& id, const std::string& name) {
  return claim_number(ledger, id, &ClaimRecord::facts, name);
}

std::optional<double> threshold_number(const Ledger& ledger, const std::string& id, const std::string& name) {
  return claim_number(ledger, id, &ClaimRecord::thresholds, name);
}

Ledger read_ledger_summary(const std::string& dir) {
  const fs::path ledger_path = fs::path(dir) / "ledger.json";
  SL_CHECK(!dir.empty(), "the report directory is empty (\"\"): pass the directory scalelab check wrote");
  std::error_code ec;
  SL_CHECK(fs::is_directory(dir, ec), q(dir), ": no such directory (expected the output of scalelab check)");
  SL_CHECK(fs::symlink_status(ledger_path, ec).type() != fs::file_type::not_found, q(dir),
           ": no ledger.json (is this the output of scalelab check?)");
  const Json j = parse_file(ledger_path.string());
  const Reader r(j, ledger_path.string(), "");
  check_schema(r, j);
  Ledger ledger;
  ledger.dir = dir;
  ledger.mode = r.str("mode");
  ledger.version = r.str("version");
  ledger.cpu = r.str("cpu");
  ledger.seconds = r.number("seconds");
  ledger.runs = r.number("runs");
  ledger.cached_runs = r.number("cached_runs");
  ledger.train_seeds = r.number("train_seeds");
  ledger.init_seeds = r.number("init_seeds");
  const Json& claims = r.array("claims");
  std::set<std::string> seen;
  for (size_t i = 0; i < claims.size(); ++i) {
    const Reader e = r.child(claims[i], "claims[" + std::to_string(i) + "]");
    LedgerEntry entry;
    entry.id = e.str("id", true);
    if (!seen.insert(entry.id).second) e.fail("id", "= " + q(entry.id) + ": listed twice");
    // An id names a file (claims/<ID>.json): letters, digits, '-' and '_' (E1, A13, a user's qk-norm_256).
    for (char ch : entry.id)
      if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '-' && ch != '_')
        e.fail("id", "= " + q(entry.id) + ": claim ids are letters, digits, '-' and '_' (E1, A13, qk-norm)");
    entry.verdict = parse_verdict(e);
    entry.condition = e.str("condition");
    entry.provisional = e.boolean("provisional");
    entry.key_number = parse_key_number(e);
    ledger.entries.push_back(std::move(entry));
  }
  return ledger;
}

Ledger read_ledger(const std::string& dir) {
  Ledger ledger = read_ledger_summary(dir);
  for (const LedgerEntry& entry : ledger.entries) {
    const std::string claim_path = (fs::path(dir) / "claims" / (entry.id + ".json")).string();
    ClaimRecord claim = read_claim(claim_path);
    SL_CHECK(claim.id == entry.id, q(claim_path), ": id = ", q(claim.id), " but ledger.json lists it as ",
             q(entry.id));
    ledger.claims.emplace(entry.id, std::move(claim));
  }
  return ledger;
}

}  // namespace scalelab::report
