// data/example: what every dataset yields and what the batcher consumes.
//
// Token ids index a Vocab. Special ids are fixed in every vocabulary: 0 = <pad>, 1 = <bos>,
// 2 = <eos>, 3 = <unk>. An Example holds the bare sequences; the batcher adds <bos>/<eos>.
// For a decoder-only task, src is empty and tgt is the text.
#pragma once
#include <cstdint>
#include <vector>

namespace scalelab {

constexpr int32_t kPadId = 0;
constexpr int32_t kBosId = 1;
constexpr int32_t kEosId = 2;
constexpr int32_t kUnkId = 3;
constexpr int32_t kNumSpecialTokens = 4;

struct Example {
  std::vector<int32_t> src;
  std::vector<int32_t> tgt;
};

}  // namespace scalelab
