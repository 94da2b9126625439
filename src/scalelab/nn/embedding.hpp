// nn/embedding: y = s · E[token], the scale s a constant or a learned scalar.
//
//   forward:   y[r] = s · E[ids[r]]
//   backward:  dE[ids[r]] += s · dy[r];   ds += sum_r dy[r] · E[ids[r]]   (learned s only)
#pragma once
#include "scalelab/nn/parameter.hpp"

namespace scalelab {

template <class T>
class Embedding {
 public:
  Embedding() = default;
  // scale: the constant, or the learned scalar's initial value.
  Embedding(const std::string& name, int64_t vocab, int64_t dim, double scale, bool learned_scale);

  void forward(const int32_t* ids, int64_t rows, T* y);
  void backward(const T* dy);

  // The learned scalar back to its initial value (the constructor's `scale`); no-op for a constant.
  void initialize_scale();

  ParameterRefs<T> parameters();
  Parameter<T>& table() { return table_; }
  T scale() const { return learned_ ? scale_param_.value[0] : static_cast<T>(scale_); }
  int64_t vocab() const { return vocab_; }
  int64_t dim() const { return dim_; }

 private:
  int64_t vocab_ = 0, dim_ = 0;
  double scale_ = 1.0;
  bool learned_ = false;
  Parameter<T> table_, scale_param_;
  const int32_t* saved_ids_ = nullptr;
  int64_t saved_rows_ = 0;
};

// Sinusoidal positions (Vaswani et al. 2017 §3.5):
//   PE[pos, 2i] = sin(pos / 10000^(2i/d)),  PE[pos, 2i+1] = cos(pos / 10000^(2i/d))
// Adds PE[0..len) to each of the batch's sequences in x [batch*len, d].
template <class T>
void add_sinusoidal_positions(T* x, int64_t batch, int64_t len, int64_t dim, int64_t offset = 0);

}  // namespace scalelab
