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

// Throws Error naming the file and the problem (missing, a directory, truncated, bad header,
// unsupported dtype, offsets that are not integers, unaligned, overlapping, leave gaps or
// trailing bytes, a shape that does not match its offsets).
SafetensorsFile read_safetensors(const std::string& path);

// Writes a little-endian float32 .npy array (for comparing outputs with numpy/PyTorch), atomically.
void write_npy(const std::string& path, const Shape& shape, const float* data);
// Reads a little-endian int32 or int64 .npy (as int32) with a strict header; shape returned
// through `shape`. The data size is checked against the file before allocating; an int64 value
// outside int32, trailing bytes or a malformed header is an Error naming the file.
std::vector<int32_t> read_npy_int(const std::string& path, Shape& shape);

}  // namespace scalelab
