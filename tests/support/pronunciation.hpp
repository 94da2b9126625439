// tests/support/pronunciation: a pronunciation written as text, for G2P test cases:
//   phones_of("K AE T") == Pronunciation{"K", "AE", "T"}; phones_of("") is empty.
#pragma once
#include <sstream>
#include <string>

#include "scalelab/data/cmudict.hpp"

namespace scalelab::test {

inline Pronunciation phones_of(const std::string& text) {
  Pronunciation p;
  std::istringstream in(text);
  for (std::string ph; in >> ph;) p.push_back(ph);
  return p;
}

}  // namespace scalelab::test
