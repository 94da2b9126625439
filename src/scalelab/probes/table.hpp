// probes/table: the readable per-layer tables of `scalelab probe`, from the spread over seeds.
//
// Every cell is "median±h" over seeds, h = (max - min) / 2 (just the median for one seed, "-" when
// no seed has a finite value). Tables: the stack inputs (token vs position variance), attention per
// layer and sublayer (all heads), the residual stream per sublayer with the f16 headroom, and the
// gradients per layer with the update/parameter ratio of the optimiser step.
#pragma once
#include <iosfwd>
#include <string>

#include "scalelab/probes/summary.hpp"

namespace scalelab::probes {

// One cell: "median±halfrange" of a group's field ("-" if the group is missing or all NaN).
std::string format_cell(const SeedSpread* spread);

// v with `digits` significant digits ("-" for NaN).
std::string format_number(double v, int digits = 3);

// step: which step's records to show (0 for models at initialisation).
void print_probe_tables(std::ostream& out, const SeedSummary& summary, int64_t step = 0);

}  // namespace scalelab::probes
