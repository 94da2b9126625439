#include "scalelab/ledger/verdict.hpp"

#include <cmath>
#include <iomanip>
#include <sstream>

#include "scalelab/core/error.hpp"

namespace scalelab::ledger {

const char* verdict_name(VerdictKind kind) {
  switch (kind) {
    case VerdictKind::holds: return "holds";
    case VerdictKind::holds_only_if: return "holds only if";
    case VerdictKind::does_not_hold: return "does not hold";
    case VerdictKind::not_testable: return "not testable here";
  }
  return "?";
}

VerdictKind parse_verdict(const std::string& name) {
  for (VerdictKind k : {VerdictKind::holds, VerdictKind::holds_only_if, VerdictKind::does_not_hold,
                        VerdictKind::not_testable})
    if (name == verdict_name(k)) return k;
  throw_error("verdict \"", name, "\" is not one of: holds, holds only if, does not hold, not testable here");
}

std::string fmt(double x) {
  if (!std::isfinite(x)) return std::isnan(x) ? "n/a" : (x > 0 ? "inf" : "-inf");
  std::ostringstream out;
  const double a = std::abs(x);
  if (a != 0 && (a >= 1e5 || a < 1e-3)) out << std::setprecision(2) << std::scientific << x;
  else if (a >= 100) out << std::fixed << std::setprecision(0) << x;
  else out << std::setprecision(3) << x;
  return out.str();
}

}  // namespace scalelab::ledger
