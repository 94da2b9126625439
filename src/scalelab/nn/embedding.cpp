#include "scalelab/nn/embedding.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "scalelab/core/error.hpp"
#include "scalelab/core/parallel.hpp"

namespace scalelab {

template <class T>
Embedding<T>::Embedding(const std::string& name, int64_t vocab, int64_t dim, double scale,
                        bool learned_scale)
    : vocab_(vocab), dim_(dim), scale_(scale), learned_(learned_scale),
      table_(name + ".weight", {vocab, dim}, ParamRole::embedding_table) {
  if (learned_) scale_param_ = Parameter<T>(name + ".scale", {1}, ParamRole::embedding_scale);
  initialize_scale();
}

template <class T>
void Embedding<T>::initialize_scale() {
  if (learned_) scale_param_.value[0] = static_cast<T>(scale_);
}

template <class T>
void Embedding<T>::forward(const int32_t* ids, int64_t rows, T* y) {
  saved_ids_ = ids;
  saved_rows_ = rows;
  const T s = scale();
  const T* table = table_.value.data();
  for (int64_t r = 0; r < rows; ++r)  // checked first: an exception may not leave a parallel region
    SL_CHECK(ids[r] >= 0 && ids[r] < vocab_, "token id ", ids[r], " at position ", r,
             " is outside the vocabulary [0, ", vocab_, ")");
  parallel_for(rows, [&](int64_t r) {
    const T* row = table + ids[r] * dim_;
    for (int64_t j = 0; j < dim_; ++j) y[r * dim_ + j] = s * row[j];
  });
}

template <class T>
void Embedding<T>::backward(const T* dy) {
  const T s = scale();
  T* dtable = table_.grad.data();
  const T* table = table_.value.data();
  if (!learned_) {
    // dE[id] += s · dy[r] (from y[r] = s · E[id]). Rows sharing an id add into one table row, so
    // the threads split the columns, not the rows: each element still sums its rows in order, the
    // same sum on any number of threads.
    constexpr int64_t kColumns = 16;
    parallel_for((dim_ + kColumns - 1) / kColumns, [&](int64_t block) {
      const int64_t j0 = block * kColumns, j1 = std::min(dim_, j0 + kColumns);
      for (int64_t r = 0; r < saved_rows_; ++r) {
        T* __restrict out = dtable + saved_ids_[r] * dim_;
        const T* __restrict in = dy + r * dim_;
        for (int64_t j = j0; j < j1; ++j) out[j] += s * in[j];
      }
    });
    return;
  }
  T ds = 0;  // and ds += dy[r] · E[id] (from y[r] = s · E[id], s learned): one sum, serial
  for (int64_t r = 0; r < saved_rows_; ++r) {
    const int64_t id = saved_ids_[r];
    for (int64_t j = 0; j < dim_; ++j) {
      dtable[id * dim_ + j] += s * dy[r * dim_ + j];   // from y[r] = s · E[id]
      ds += dy[r * dim_ + j] * table[id * dim_ + j];
    }
  }
  scale_param_.grad[0] += ds;
}

template <class T>
ParameterRefs<T> Embedding<T>::parameters() {
  ParameterRefs<T> out{&table_};
  if (learned_) out.push_back(&scale_param_);
  return out;
}

template <class T>
void add_sinusoidal_positions(T* x, int64_t batch, int64_t len, int64_t dim, int64_t offset) {
  // PE[offset + p] for the len positions as a table, then added to each sequence's rows in memory
  // order (adding one position at a time across the batch strode through x). The table of the
  // last (len, dim, offset) is kept per thread: a training step asks for the same few.
  thread_local std::vector<T> table;
  thread_local int64_t made_len = -1, made_dim = -1, made_offset = -1;
  if (made_len != len || made_dim != dim || made_offset != offset) {
    table.assign(static_cast<size_t>(len * dim), T(0));
    for (int64_t p = 0; p < len; ++p) {
      for (int64_t i = 0; i < dim; i += 2) {
        const double angle = double(p + offset) / std::pow(10000.0, double(i) / double(dim));
        table[p * dim + i] = static_cast<T>(std::sin(angle));
        if (i + 1 < dim) table[p * dim + i + 1] = static_cast<T>(std::cos(angle));
      }
    }
    made_len = len, made_dim = dim, made_offset = offset;
  }
  const T* pe = table.data();  // this thread's table, read by all
  parallel_for(batch, [&](int64_t b) {
    T* __restrict rows = x + b * len * dim;
    const T* __restrict row_pe = pe;
#pragma omp simd
    for (int64_t j = 0; j < len * dim; ++j) rows[j] += row_pe[j];
  });
}

template class Embedding<float>;
template class Embedding<double>;
template void add_sinusoidal_positions<float>(float*, int64_t, int64_t, int64_t, int64_t);
template void add_sinusoidal_positions<double>(double*, int64_t, int64_t, int64_t, int64_t);

}  // namespace scalelab
