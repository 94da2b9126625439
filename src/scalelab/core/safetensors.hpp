// core/safetensors: read and write the safetensors format (f32 tensors), atomically.
//
// Layout: 8-byte little-endian header length N, N bytes of JSON
//   {"__metadata__": {str: str}, "<name>": {"dtype": "F32", "shape": [...], "data_offsets": [b, e]}}
// then the raw little-endian data. Loadable with numpy alone (see docs/checkpoint.md).
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "scalelab/core/tensor.hpp"

namespace scalelab {

struct TensorRef {  // a tensor to write, by reference
  std::string name;
  Shape shape;
  const float* data = nullptr;
};

struct SafetensorsFile {
  std::map<std::string, std::string> metadata;
  std::map<std::string, Tensor<float>> tensors;
};

// Written with write_file_atomically (core/atomic_file.hpp), so a crash never leaves a
// half-written file under the real name and an existing checkpoint survives a failed write.
void write_safetensors(const std::string& path, const std::vector<TensorRef>& tensors,
                       const std::map<std::string, std::string>& metadata);

// Throws Error naming the file and the problem (missing, truncated, bad header, unsupported dtype).
SafetensorsFile read_safetensors(const std::string& path);

// Writes a little-endian float32 .npy array (for comparing outputs with numpy/PyTorch), atomically.
void write_npy(const std::string& path, const Shape& shape, const float* data);
// Reads a .npy of int32/int64 (as int32) or float32; shape returned through `shape`.
std::vector<int32_t> read_npy_int(const std::string& path, Shape& shape);

}  // namespace scalelab
