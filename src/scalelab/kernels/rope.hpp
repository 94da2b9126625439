// kernels/rope: rotary position embedding (Su et al. 2021) on q or k, in place.
//
// Layout [batch, len, heads, head_dim] with a token stride (as attention.hpp). Half-split pairing
// (GPT-NeoX, LLaMA in Hugging Face): dimension i < D/2 pairs with i + D/2, rotated by
//   theta_i(p) = (p + offset) · base^(-2i/D)
//   forward:   y_i = x_i cos - x_{i+D/2} sin,    y_{i+D/2} = x_i sin + x_{i+D/2} cos
//   backward:  the inverse rotation (the transpose of an orthogonal map):
//              dx_i = dy_i cos + dy_{i+D/2} sin, dx_{i+D/2} = -dy_i sin + dy_{i+D/2} cos
// D must be even. Because q_p·k_r after rotation depends only on p - r, the logits of a rotated
// pair depend on relative offsets only.
#pragma once
#include <cstdint>

namespace scalelab {

struct RopeShape {
  int64_t batch = 0, len = 0, heads = 0, head_dim = 0;
  int64_t token_stride = 0;  // 0: heads * head_dim
  int64_t offset = 0;        // position of the first token
  double base = 10000.0;
};

template <class T>
void rope_forward(const RopeShape& s, T* x);
template <class T>
void rope_backward(const RopeShape& s, T* dx);  // in place: dy -> dx
template <class T>
void rope_forward_ref(const RopeShape& s, T* x);

}  // namespace scalelab
