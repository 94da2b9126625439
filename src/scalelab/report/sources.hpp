// report/sources: what the papers and the reference implementations actually do, read from
// their text and code by hand. Kept apart from the measurements: nothing here is measured.
#pragma once
#include <vector>

#include "scalelab/report/document.hpp"

namespace scalelab::report {

std::vector<Block> sources_blocks();

}  // namespace scalelab::report
