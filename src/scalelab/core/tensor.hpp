// core/tensor: a dense, row-major, owning array with a shape.
//
// Deliberately small: kernels take raw pointers and sizes (as llm.c does), so the tensor only has
// to own memory (64-byte aligned, for SIMD) and remember its shape. T is float for the engine and
// double for the finite-difference gradient checks.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <new>
#include <numeric>
#include <string>
#include <vector>

#include "scalelab/core/error.hpp"

namespace scalelab {

using Shape = std::vector<int64_t>;

inline int64_t shape_numel(const Shape& shape) {
  return std::accumulate(shape.begin(), shape.end(), int64_t{1}, std::multiplies<int64_t>());
}

inline std::string shape_str(const Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

template <class T>
class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(Shape shape) { resize(std::move(shape)); }
  Tensor(std::initializer_list<int64_t> shape) : Tensor(Shape(shape)) {}

  // Copies keep an empty tensor empty: a default one has shape [] and no element, which resize
  // would read as a scalar (the product of no dimensions is 1) with nothing to copy from.
  Tensor(const Tensor& other) { *this = other; }
  Tensor& operator=(const Tensor& other) {
    if (this == &other) return *this;
    if (other.numel_ == 0) {
      shape_ = other.shape_;
      numel_ = 0;
      return *this;
    }
    resize(other.shape_);
    std::memcpy(data_.get(), other.data_.get(), bytes());
    return *this;
  }
  // A moved-from tensor is empty, like a default one (the defaulted moves left its element count
  // behind with no data, so copying it read through a null pointer).
  Tensor(Tensor&& other) noexcept
      : data_(std::move(other.data_)), shape_(std::move(other.shape_)), numel_(other.numel_),
        capacity_(other.capacity_) {
    other.release();
  }
  Tensor& operator=(Tensor&& other) noexcept {
    if (this != &other) {
      data_ = std::move(other.data_);
      shape_ = std::move(other.shape_);
      numel_ = other.numel_;
      capacity_ = other.capacity_;
      other.release();
    }
    return *this;
  }

  // Reshapes, reallocating only when the element count grows; contents are unspecified after a
  // reallocation (callers that need zeros call zero()).
  void resize(Shape shape) {
    const int64_t n = shape_numel(shape);
    SL_CHECK(n >= 0, "tensor shape ", shape_str(shape), " has a negative dimension");
    if (n > capacity_) {
      data_.reset(allocate(n));
      capacity_ = n;
    }
    shape_ = std::move(shape);
    numel_ = n;
  }

  // Same element count, new shape (no copy).
  void reshape(Shape shape) {
    SL_CHECK(shape_numel(shape) == numel_, "cannot reshape ", shape_str(shape_), " to ",
             shape_str(shape));
    shape_ = std::move(shape);
  }

  void zero() {
    if (numel_) std::memset(data_.get(), 0, bytes());
  }
  void fill(T value) {
    for (int64_t i = 0; i < numel_; ++i) data_[i] = value;
  }

  T* data() { return data_.get(); }
  const T* data() const { return data_.get(); }
  T& operator[](int64_t i) { return data_[i]; }
  const T& operator[](int64_t i) const { return data_[i]; }
  T* begin() { return data_.get(); }
  T* end() { return data_.get() + numel_; }
  const T* begin() const { return data_.get(); }
  const T* end() const { return data_.get() + numel_; }

  const Shape& shape() const { return shape_; }
  int64_t dim(int i) const { return shape_[i < 0 ? shape_.size() + i : i]; }
  int rank() const { return static_cast<int>(shape_.size()); }
  int64_t numel() const { return numel_; }
  size_t bytes() const { return static_cast<size_t>(numel_) * sizeof(T); }
  bool empty() const { return numel_ == 0; }

 private:
  struct Free {
    void operator()(T* p) const { std::free(p); }
  };
  static T* allocate(int64_t n) {
    const size_t bytes = ((static_cast<size_t>(n) * sizeof(T) + 63) / 64) * 64;
    void* p = std::aligned_alloc(64, bytes ? bytes : 64);
    if (!p) throw std::bad_alloc();
    return static_cast<T*>(p);
  }

  void release() noexcept {
    data_.reset();
    shape_.clear();
    numel_ = 0;
    capacity_ = 0;
  }

  std::unique_ptr<T[], Free> data_;
  Shape shape_;
  int64_t numel_ = 0;
  int64_t capacity_ = 0;
};

}  // namespace scalelab
