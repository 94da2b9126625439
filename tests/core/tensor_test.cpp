// core/tensor: copies and moves, including of empty and moved-from tensors, and the resize
// behaviour callers rely on (shrinking keeps the leading elements).
#include "scalelab/core/tensor.hpp"

#include <gtest/gtest.h>

#include <utility>

namespace scalelab {
namespace {

Tensor<float> counting(Shape shape) {
  Tensor<float> t(std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i) t[i] = static_cast<float>(i);
  return t;
}

TEST(Tensor, CopyIsDeep) {
  Tensor<float> a = counting({3, 4});
  Tensor<float> b(a);
  a[5] = -1.0f;
  EXPECT_EQ(b.shape(), (Shape{3, 4}));
  EXPECT_EQ(b[5], 5.0f);
  Tensor<float> c;
  c = b;
  EXPECT_EQ(c.numel(), 12);
  EXPECT_EQ(c[11], 11.0f);
}

TEST(Tensor, CopyOfAnEmptyTensorIsEmpty) {
  const Tensor<float> fresh;
  const Tensor<float> copy(fresh);  // used to read one element through a null pointer
  EXPECT_EQ(copy.numel(), 0);
  EXPECT_TRUE(copy.empty());
  const Tensor<float> zero_rows({0, 4});
  Tensor<float> assigned = counting({2, 2});
  assigned = zero_rows;
  EXPECT_EQ(assigned.numel(), 0);
  EXPECT_EQ(assigned.shape(), (Shape{0, 4}));
}

TEST(Tensor, MovedFromIsEmptyAndCopyable) {
  Tensor<float> a = counting({2, 3});
  Tensor<float> b(std::move(a));
  EXPECT_EQ(b.numel(), 6);
  EXPECT_EQ(b[4], 4.0f);
  EXPECT_EQ(a.numel(), 0);  // NOLINT(bugprone-use-after-move): the state is the point
  EXPECT_TRUE(a.shape().empty());
  const Tensor<float> copy(a);  // used to crash: numel 6, no data
  EXPECT_EQ(copy.numel(), 0);
  Tensor<float> c = counting({5});
  c = std::move(b);
  EXPECT_EQ(c.numel(), 6);
  EXPECT_EQ(b.numel(), 0);  // NOLINT(bugprone-use-after-move)
  a.resize({2, 2});  // a moved-from tensor is usable again
  EXPECT_EQ(a.numel(), 4);
}

TEST(Tensor, ShrinkingKeepsTheLeadingElements) {
  Tensor<float> t = counting({4, 3});
  const float* before = t.data();
  t.resize({2, 3});  // KvCache::keep_first relies on this: no reallocation, no copy
  EXPECT_EQ(t.data(), before);
  for (int64_t i = 0; i < 6; ++i) EXPECT_EQ(t[i], static_cast<float>(i));
}

}  // namespace
}  // namespace scalelab
