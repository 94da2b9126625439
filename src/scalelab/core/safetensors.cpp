#include "scalelab/core/safetensors.hpp"

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "scalelab/core/atomic_file.hpp"
#include "scalelab/core/error.hpp"

namespace scalelab {
namespace {

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  SL_CHECK(in, "cannot open ", path, ": ", (std::filesystem::exists(path) ? "not readable" : "no such file"));
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace

void write_safetensors(const std::string& path, const std::vector<TensorRef>& tensors,
                       const std::map<std::string, std::string>& metadata) {
  nlohmann::json header;
  header["__metadata__"] = metadata;
  size_t offset = 0;
  for (const TensorRef& t : tensors) {
    const size_t bytes = static_cast<size_t>(shape_numel(t.shape)) * sizeof(float);
    SL_CHECK(!header.contains(t.name), "duplicate tensor name ", t.name, " in ", path);
    header[t.name] = {{"dtype", "F32"}, {"shape", t.shape}, {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  std::string json = header.dump();
  while ((json.size() + 8) % 8 != 0) json.push_back(' ');  // keep the data 8-byte aligned
  std::string head(8, '\0');
  const uint64_t n = json.size();
  for (int i = 0; i < 8; ++i) head[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  head += json;
  std::vector<std::string_view> parts{head};
  for (const TensorRef& t : tensors)
    parts.emplace_back(reinterpret_cast<const char*>(t.data), shape_numel(t.shape) * sizeof(float));
  write_file_atomically(path, parts);
}

SafetensorsFile read_safetensors(const std::string& path) {
  const std::string bytes = read_all(path);
  SL_CHECK(bytes.size() >= 8, path, ": truncated (", bytes.size(), " bytes, no header)");
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= uint64_t(static_cast<unsigned char>(bytes[i])) << (8 * i);
  SL_CHECK(n <= bytes.size() - 8, path, ": truncated or not a safetensors file (header of ", n,
           " bytes, file of ", bytes.size(), ")");
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(bytes.substr(8, n));
  } catch (const std::exception& e) {
    throw_error(path, ": bad safetensors header: ", e.what());
  }
  SafetensorsFile file;
  const size_t data_size = bytes.size() - 8 - n;
  const char* data = bytes.data() + 8 + n;
  for (auto it = header.begin(); it != header.end(); ++it) {
    if (it.key() == "__metadata__") {
      for (auto m = it->begin(); m != it->end(); ++m) file.metadata[m.key()] = m->get<std::string>();
      continue;
    }
    const auto& info = *it;
    SL_CHECK(info.value("dtype", "") == "F32", path, ": tensor ", it.key(), " has dtype ",
             info.value("dtype", "?"), "; only F32 is supported");
    const Shape shape = info.at("shape").get<Shape>();
    const size_t begin = info.at("data_offsets").at(0).get<size_t>();
    const size_t end = info.at("data_offsets").at(1).get<size_t>();
    SL_CHECK(end >= begin && end - begin == shape_numel(shape) * sizeof(float), path, ": tensor ",
             it.key(), " has offsets [", begin, ", ", end, ") that do not match shape ",
             shape_str(shape));
    SL_CHECK(end <= data_size, path, ": truncated (tensor ", it.key(), " ends at byte ", end,
             " of a ", data_size, "-byte data section)");
    Tensor<float> t(shape);
    if (t.numel()) std::memcpy(t.data(), data + begin, end - begin);
    file.tensors.emplace(it.key(), std::move(t));
  }
  return file;
}

void write_npy(const std::string& path, const Shape& shape, const float* data) {
  std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < shape.size(); ++i) dict += std::to_string(shape[i]) + ", ";
  if (shape.size() > 1) dict.erase(dict.size() - 2);  // numpy writes (n,) for rank 1
  else if (shape.size() == 1) dict.pop_back();
  dict += "), }";
  while ((10 + dict.size() + 1) % 64 != 0) dict.push_back(' ');
  dict.push_back('\n');
  const uint16_t len = static_cast<uint16_t>(dict.size());
  std::string head("\x93NUMPY\x01\x00", 8);
  head.push_back(static_cast<char>(len & 0xff));
  head.push_back(static_cast<char>(len >> 8));
  head += dict;
  // Atomic and checked (errors name the file): a full disk never leaves a truncated array.
  const std::string_view values(reinterpret_cast<const char*>(data),
                                shape_numel(shape) * sizeof(float));
  write_file_atomically(path, std::vector<std::string_view>{head, values});
}

std::vector<int32_t> read_npy_int(const std::string& path, Shape& shape) {
  const std::string bytes = read_all(path);
  SL_CHECK(bytes.size() >= 10 && bytes.compare(0, 6, "\x93NUMPY") == 0, path, ": not a .npy file");
  const int major = bytes[6];
  const size_t len_bytes = major == 1 ? 2 : 4;
  size_t header_len = 0;
  for (size_t i = 0; i < len_bytes; ++i)
    header_len |= size_t(static_cast<unsigned char>(bytes[8 + i])) << (8 * i);
  const size_t start = 8 + len_bytes + header_len;
  SL_CHECK(start <= bytes.size(), path, ": truncated .npy header");
  const std::string header = bytes.substr(8 + len_bytes, header_len);
  SL_CHECK(header.find("'fortran_order': False") != std::string::npos, path,
           ": Fortran-ordered arrays are not supported");
  const size_t descr_at = header.find("'descr': '") + 10;
  const std::string descr = header.substr(descr_at, header.find('\'', descr_at) - descr_at);
  shape.clear();
  const size_t open = header.find('(', header.find("'shape'"));
  const size_t close = header.find(')', open);
  std::string dims = header.substr(open + 1, close - open - 1);
  size_t pos = 0;
  while (pos < dims.size()) {
    const size_t comma = dims.find(',', pos);
    const std::string item = dims.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    if (item.find_first_of("0123456789") != std::string::npos) shape.push_back(std::stoll(item));
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  const int64_t n = shape_numel(shape);
  const char* data = bytes.data() + start;
  std::vector<int32_t> out(n);
  const size_t item = descr == "<i4" ? 4 : descr == "<i8" ? 8 : 0;
  SL_CHECK(item, path, ": dtype ", descr, " is not supported (use int32 or int64)");
  SL_CHECK(bytes.size() - start >= n * item, path, ": truncated .npy data");
  for (int64_t i = 0; i < n; ++i) {
    if (item == 4) std::memcpy(&out[i], data + 4 * i, 4);
    else {
      int64_t v;
      std::memcpy(&v, data + 8 * i, 8);
      out[i] = static_cast<int32_t>(v);
    }
  }
  return out;
}

}  // namespace scalelab
