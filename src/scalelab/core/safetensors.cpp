#include "scalelab/core/safetensors.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "scalelab/core/atomic_file.hpp"
#include "scalelab/core/error.hpp"

namespace scalelab {
namespace {

std::string read_all(const std::string& path) {
  // A directory opens as a stream on Linux and fails only on the first read, with a library
  // message ("basic_filebuf::underflow"): name it first.
  std::error_code ec;
  SL_CHECK(!std::filesystem::is_directory(path, ec), "cannot read ", path, ": it is a directory");
  std::ifstream in(path, std::ios::binary);
  SL_CHECK(in, "cannot open ", path, ": ", (std::filesystem::exists(path, ec) ? "not readable" : "no such file"));
  std::ostringstream content;
  content << in.rdbuf();
  SL_CHECK(!in.bad(), "cannot read ", path, ": read error");
  return content.str();
}

// A JSON integer >= 0 (not a float, not negative); false otherwise.
bool get_count(const nlohmann::json& j, uint64_t& out) {
  if (!j.is_number_unsigned() && !(j.is_number_integer() && j.get<int64_t>() >= 0)) return false;
  out = j.get<uint64_t>();
  return true;
}

// The product of `shape`, or false if it exceeds `limit` (checked before any multiplication
// could overflow, so a forged shape never reaches an allocation).
bool numel_within(const Shape& shape, uint64_t limit, uint64_t& numel) {
  // The non-zero dimensions must multiply within int64 even when a zero makes the tensor empty:
  // Tensor's shape_numel multiplies them in order, and (2^32, 2^32, 0) would overflow before the 0.
  uint64_t product = 1;
  bool empty = false;
  for (int64_t d : shape) {
    if (d == 0) { empty = true; continue; }
    if (uint64_t(d) > uint64_t(INT64_MAX) / product) return false;
    product *= uint64_t(d);
  }
  numel = empty ? 0 : product;
  return empty || product <= limit;
}

struct TensorEntry {
  std::string name;
  Shape shape;
  uint64_t begin = 0, end = 0;
};

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

// Strict, like the reference implementation: every tensor's offsets are integers, F32-aligned,
// consistent with its shape, and the tensors tile the data section exactly (no overlap, no gap,
// no trailing bytes). Every problem is one Error naming the file (and the tensor).
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
  } catch (const nlohmann::json::parse_error& e) {
    throw_error(path, ": bad safetensors header: not valid JSON (at byte ", e.byte, " of ", n, ")");
  } catch (const nlohmann::json::exception&) {  // e.g. a number beyond double's range (1e400)
    throw_error(path, ": bad safetensors header: a number out of range in its JSON");
  }
  SL_CHECK(header.is_object(), path, ": bad safetensors header: a JSON ", header.type_name(),
           ", expected an object of tensors");
  SafetensorsFile file;
  const uint64_t data_size = bytes.size() - 8 - n;
  const char* data = bytes.data() + 8 + n;
  std::vector<TensorEntry> entries;
  for (auto it = header.begin(); it != header.end(); ++it) {
    const std::string& name = it.key();
    if (name == "__metadata__") {
      SL_CHECK(it->is_object(), path, ": __metadata__ is a JSON ", it->type_name(), ", expected an object");
      for (auto m = it->begin(); m != it->end(); ++m) {
        SL_CHECK(m->is_string(), path, ": __metadata__ value ", m.key(), " is a JSON ",
                 m->type_name(), ", expected a string");
        file.metadata[m.key()] = m->get<std::string>();
      }
      continue;
    }
    const auto& info = *it;
    SL_CHECK(info.is_object(), path, ": tensor ", name, ": a JSON ", info.type_name(), ", expected an object");
    const auto dtype = info.find("dtype");
    SL_CHECK(dtype != info.end() && dtype->is_string() && *dtype == "F32", path, ": tensor ", name,
             " has dtype ", dtype == info.end() ? "(missing)" : dtype->dump(), "; only F32 is supported");
    TensorEntry e{name, {}, 0, 0};
    const auto shape = info.find("shape");
    SL_CHECK(shape != info.end() && shape->is_array(), path, ": tensor ", name,
             " has no shape (expected an array of integers >= 0)");
    for (const auto& d : *shape) {
      uint64_t v = 0;
      SL_CHECK(get_count(d, v) && v <= uint64_t(INT64_MAX), path, ": tensor ", name, " has shape ",
               shape->dump(), "; dimensions must be integers >= 0");
      e.shape.push_back(int64_t(v));
    }
    const auto offsets = info.find("data_offsets");
    SL_CHECK(offsets != info.end() && offsets->is_array() && offsets->size() == 2 &&
                 get_count((*offsets)[0], e.begin) && get_count((*offsets)[1], e.end),
             path, ": tensor ", name, " has data_offsets ",
             offsets == info.end() ? "(missing)" : offsets->dump(), "; expected [begin, end], integers >= 0");
    uint64_t numel = 0;
    SL_CHECK(numel_within(e.shape, data_size / sizeof(float), numel), path, ": truncated (tensor ",
             name, " of shape ", shape_str(e.shape), " needs more than the ", data_size, "-byte data section)");
    SL_CHECK(e.end >= e.begin && e.end - e.begin == numel * sizeof(float), path, ": tensor ", name,
             " has offsets [", e.begin, ", ", e.end, ") that do not match shape ", shape_str(e.shape));
    SL_CHECK(e.end <= data_size, path, ": truncated (tensor ", name, " ends at byte ", e.end,
             " of a ", data_size, "-byte data section)");
    SL_CHECK(e.begin % sizeof(float) == 0, path, ": tensor ", name, " starts at byte ", e.begin,
             ", not a multiple of 4 (F32 data must be aligned)");
    entries.push_back(std::move(e));
  }
  // The tensors must tile the data section: sorted by offset, each starts where the last ended.
  std::vector<const TensorEntry*> order;
  for (const auto& e : entries) order.push_back(&e);
  std::stable_sort(order.begin(), order.end(), [](const TensorEntry* a, const TensorEntry* b) {
    return a->begin != b->begin ? a->begin < b->begin : a->end < b->end;
  });
  uint64_t covered = 0;
  const TensorEntry* previous = nullptr;
  for (const TensorEntry* e : order) {
    SL_CHECK(e->begin >= covered, path, ": tensors ", previous->name, " [", previous->begin, ", ",
             previous->end, ") and ", e->name, " [", e->begin, ", ", e->end, ") overlap");
    SL_CHECK(e->begin == covered, path, ": ", e->begin - covered, " unused bytes before tensor ",
             e->name, " (at byte ", covered, " of the data section)");
    covered = e->end;
    previous = e;
  }
  SL_CHECK(covered == data_size, path, ": ", data_size - covered,
           " trailing bytes after the last tensor (data section of ", data_size, " bytes)");
  for (const TensorEntry& e : entries) {
    Tensor<float> t(e.shape);
    if (t.numel()) std::memcpy(t.data(), data + e.begin, e.end - e.begin);
    file.tensors.emplace(e.name, std::move(t));
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

namespace {

// The value text of `key` in a .npy header dict ("{'descr': '<i8', 'fortran_order': False,
// 'shape': (3, 4), }"), up to the next top-level comma; empty if the key is absent.
std::string npy_field(const std::string& header, const std::string& key) {
  const size_t at = header.find("'" + key + "':");
  if (at == std::string::npos) return {};
  size_t i = at + key.size() + 3;
  while (i < header.size() && header[i] == ' ') ++i;
  const size_t from = i;
  if (i < header.size() && header[i] == '(') i = header.find(')', i);
  else if (i < header.size() && header[i] == '\'') i = header.find('\'', i + 1);
  else {
    const size_t stop = header.find_first_of(",}", i);
    if (stop == std::string::npos || stop == from) return {};
    i = header.find_last_not_of(' ', stop - 1);
  }
  return i == std::string::npos || i < from ? std::string() : header.substr(from, i - from + 1);
}

// "(2, 5)", "(7,)", "()": every item all digits; anything else is an error naming the text.
Shape parse_npy_shape(const std::string& path, const std::string& text) {
  SL_CHECK(text.size() >= 2 && text.front() == '(' && text.back() == ')', path,
           ": bad .npy header: shape ", text.empty() ? "(missing)" : text, " is not a tuple");
  Shape shape;
  const std::string inner = text.substr(1, text.size() - 2);
  size_t pos = 0;
  while (pos <= inner.size()) {
    const size_t comma = std::min(inner.find(',', pos), inner.size());
    std::string item = inner.substr(pos, comma - pos);
    item.erase(0, item.find_first_not_of(' '));
    item.erase(item.find_last_not_of(' ') + 1);
    const bool last = comma == inner.size();
    if (item.empty() && last && (shape.size() >= 1 || inner.find_first_not_of(' ') == std::string::npos)) break;
    SL_CHECK(!item.empty() && item.size() <= 18 && item.find_first_not_of("0123456789") == std::string::npos,
             path, ": bad .npy header: shape ", text, " (each dimension must be an integer >= 0)");
    shape.push_back(std::stoll(item));  // at most 18 digits: fits
    if (last) break;
    pos = comma + 1;
  }
  return shape;
}

}  // namespace

std::vector<int32_t> read_npy_int(const std::string& path, Shape& shape) {
  const std::string bytes = read_all(path);
  SL_CHECK(bytes.size() >= 10 && bytes.compare(0, 6, "\x93NUMPY") == 0, path,
           ": not a .npy file (no \\x93NUMPY magic)");
  const int major = static_cast<unsigned char>(bytes[6]);
  SL_CHECK(major >= 1 && major <= 3, path, ": .npy format version ", major, " is not supported");
  const size_t len_bytes = major == 1 ? 2 : 4;
  SL_CHECK(bytes.size() >= 8 + len_bytes, path, ": truncated .npy header");
  size_t header_len = 0;
  for (size_t i = 0; i < len_bytes; ++i)
    header_len |= size_t(static_cast<unsigned char>(bytes[8 + i])) << (8 * i);
  SL_CHECK(header_len <= bytes.size() - 8 - len_bytes, path, ": truncated .npy header (", header_len,
           " bytes announced, file of ", bytes.size(), ")");
  const size_t start = 8 + len_bytes + header_len;
  const std::string header = bytes.substr(8 + len_bytes, header_len);
  SL_CHECK(npy_field(header, "fortran_order") == "False", path,
           ": bad .npy header: fortran_order must be False (Fortran-ordered arrays are not supported)");
  std::string descr = npy_field(header, "descr");
  SL_CHECK(descr.size() >= 2, path, ": bad .npy header: no 'descr'");
  descr = descr.substr(1, descr.size() - 2);
  const size_t item = descr == "<i4" ? 4 : descr == "<i8" ? 8 : 0;
  SL_CHECK(item, path, ": dtype ", descr, " is not supported (use int32 or int64: <i4, <i8)");
  shape = parse_npy_shape(path, npy_field(header, "shape"));
  // The size the header claims is checked against the file before anything is allocated.
  const size_t available = bytes.size() - start;
  uint64_t n = 0;
  SL_CHECK(numel_within(shape, available / item, n), path, ": truncated .npy data (shape ",
           shape_str(shape), " needs more than the ", available, " bytes present)");
  SL_CHECK(n * item == available, path, ": ", n * item < available ? "trailing bytes in" : "truncated",
           " .npy data (shape ", shape_str(shape), " of ", descr, " is ", n * item,
           " bytes, the file holds ", available, ")");
  const char* data = bytes.data() + start;
  std::vector<int32_t> out(n);
  for (uint64_t i = 0; i < n; ++i) {
    if (item == 4) {
      std::memcpy(&out[i], data + 4 * i, 4);
      continue;
    }
    int64_t v;
    std::memcpy(&v, data + 8 * i, 8);
    SL_CHECK(v >= INT32_MIN && v <= INT32_MAX, path, ": element ", i, " = ", v,
             " does not fit in int32 (token ids must be < 2^31)");
    out[i] = static_cast<int32_t>(v);
  }
  return out;
}

}  // namespace scalelab
