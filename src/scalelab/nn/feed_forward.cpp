#include "scalelab/nn/feed_forward.hpp"

#include <type_traits>

namespace scalelab {

template <class T>
FeedForward<T>::FeedForward(const std::string& name, const LayerOptions& options)
    : act_(options.activation),
      fc1_(name + ".fc1", options.d_model, options.d_ff, options.bias),
      fc2_(name + ".fc2", options.d_ff, options.d_model, options.bias) {}

template <class T>
void FeedForward<T>::forward(const T* x, int64_t rows, T* y) {
  rows_ = rows;
  hidden_in_bf16_ = std::is_same_v<T, float> && act_ == Activation::relu && Bf16Copy::kept();
  if (hidden_in_bf16_) {  // a = bf16(relu(x W1ᵀ + b1)), bits only; y = a W2ᵀ + b2
    fc1_.forward_relu_to_bf16(x, rows, post_act_bf16_);
    fc2_.forward(nullptr, rows, y, &post_act_bf16_);
    return;
  }
  post_act_.resize({rows, fc1_.out_features()});
  if (act_ == Activation::relu) {  // a = relu(x W1ᵀ + b1) in one pass; a > 0 exactly where h > 0
    fc1_.forward_relu(x, rows, post_act_.data(), &post_act_bf16_);
    fc2_.forward(post_act_.data(), rows, y, &post_act_bf16_);                // y = a W2ᵀ + b2
    return;
  }
  pre_act_.resize({rows, fc1_.out_features()});
  fc1_.forward(x, rows, pre_act_.data());                                    // h = x W1ᵀ + b1
  activation_forward<T>(act_, pre_act_.data(), post_act_.data(), pre_act_.numel());  // a = act(h)
  fc2_.forward(post_act_.data(), rows, y);                                   // y = a W2ᵀ + b2
}

template <class T>
void FeedForward<T>::backward(const T* dy, T* dx) {
  if (hidden_in_bf16_) {
    // da = bf16(dy W2) · [a > 0], bits only, a's bits the mask; then fc1's products and db1 read
    // da's bits
    const uint16_t* a_bits = post_act_bf16_.bits_of(nullptr, rows_ * fc1_.out_features());
    fc2_.backward_to_bf16(dy, dpost_bf16_, a_bits);
    fc1_.backward(nullptr, dx, /*accumulate_dx=*/true, nullptr, nullptr, &dpost_bf16_);
    return;
  }
  dpost_.resize(post_act_.shape());
  if (act_ == Activation::relu) {
    // from y = a W2ᵀ + b2 and a = relu(h): dh = (dy W2) · [h > 0] = (dy W2) · [a > 0] (a was
    // kept, h was not), the mask applied with fc2's dx GEMM
    fc2_.backward(dy, dpost_.data(), /*accumulate_dx=*/false, /*dx_keep_where_positive=*/post_act_.data(),
                  &dpost_bf16_);
    fc1_.backward(dpost_.data(), dx, /*accumulate_dx=*/true, nullptr, nullptr, &dpost_bf16_);  // from h = x W1ᵀ + b1
    return;
  }
  fc2_.backward(dy, dpost_.data());                                          // from y = a W2ᵀ + b2
  dpre_.resize(pre_act_.shape());
  activation_backward<T>(act_, pre_act_.data(), dpost_.data(), dpre_.data(), dpre_.numel());
  fc1_.backward(dpre_.data(), dx, /*accumulate_dx=*/true);                   // from h = x W1ᵀ + b1
}

template <class T>
ParameterRefs<T> FeedForward<T>::parameters() {
  ParameterRefs<T> out;
  collect_parameters(out, fc1_, fc2_);
  return out;
}

template class FeedForward<float>;
template class FeedForward<double>;

}  // namespace scalelab
