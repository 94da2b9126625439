// fuzz/feed: one function per reader that feeds it raw bytes, shared by the libFuzzer targets
// (fuzz/*_fuzz.cpp) and the regression test of the normal suite (tests/fuzz/regressions_test.cpp).
//
// Contract of every feed_*: it returns normally (the input was accepted and the result passed the
// checks below) or lets scalelab::Error escape (rejected with a clear message). Anything else is a
// finding: another exception type (a raw library message), a crash, a leak, UB, or a failed
// invariant (reported as InvariantFailed, which the fuzz targets never catch).
//
// The readers take paths, as the CLI calls them, so byte inputs go through a memory-backed file
// (memfd, opened by path as /proc/self/fd/N) or, for the two-file g014b2b reader, a scratch
// directory under /dev/shm: no disk traffic per execution and nothing left behind.
#pragma once
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "scalelab/core/error.hpp"
#include "scalelab/core/safetensors.hpp"
#include "scalelab/data/bible.hpp"
#include "scalelab/data/cmudict.hpp"
#include "scalelab/data/g014b2b.hpp"
#include "scalelab/data/text_lm.hpp"
#ifdef SCALELAB_FEED_CONFIG
#include "scalelab/train/run_config.hpp"
#endif

namespace scalelab::fuzz {

// SCALELAB_FUZZ_ALLOW_FOREIGN=1 (scripts/fuzz.sh --allow-foreign): the targets take any
// std::exception as a rejection, so a reader that still leaks raw library exceptions (a known
// finding, being fixed) does not stop every run at its first input, and the fuzzer can reach
// memory errors, UB and failed invariants (std::logic_error is never allowed).
inline bool foreign_exceptions_allowed() {
  const char* v = std::getenv("SCALELAB_FUZZ_ALLOW_FOREIGN");
  return v && std::string(v) == "1";
}

class InvariantFailed : public std::logic_error {
  using std::logic_error::logic_error;
};

inline void require(bool ok, const char* what) {
  if (!ok) throw InvariantFailed(std::string("fuzz invariant failed: ") + what);
}

// A file whose contents live in memory; path() opens it like any file.
class MemFile {
 public:
  MemFile() : fd_(memfd_create("scalelab-fuzz", 0)) {
    if (fd_ < 0) throw std::runtime_error("memfd_create failed");
  }
  ~MemFile() { close(fd_); }
  MemFile(const MemFile&) = delete;
  MemFile& operator=(const MemFile&) = delete;
  // Replaces the contents; returns the path to open.
  std::string set(std::string_view bytes) {
    if (ftruncate(fd_, 0) != 0) throw std::runtime_error("ftruncate failed");
    size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = pwrite(fd_, bytes.data() + done, bytes.size() - done, static_cast<off_t>(done));
      if (n <= 0) throw std::runtime_error("pwrite failed");
      done += static_cast<size_t>(n);
    }
    return "/proc/self/fd/" + std::to_string(fd_);
  }

 private:
  int fd_;
};

inline MemFile& scratch_file() {
  static MemFile file;
  return file;
}

// A directory for readers that take a directory; removed at exit.
class ScratchDir {
 public:
  ScratchDir() {
    const std::filesystem::path base =
        std::filesystem::is_directory("/dev/shm") ? "/dev/shm" : std::filesystem::temp_directory_path();
    std::string templ = (base / "scalelab-fuzz-XXXXXX").string();
    if (!mkdtemp(templ.data())) throw std::runtime_error("mkdtemp failed");
    path_ = templ;
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }
  void write(const std::string& name, std::string_view bytes) const {
    std::ofstream out(path_ / name, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) throw std::runtime_error("cannot write scratch file " + name);
  }

 private:
  std::filesystem::path path_;
};

inline ScratchDir& scratch_dir() {
  static ScratchDir dir;
  return dir;
}

// An accepted shape: every dimension >= 0 and the product of the non-zero ones fits in int64, so
// shape_numel (and every size computed from it later) is defined; returns the element count.
inline int64_t checked_numel(const Shape& shape) {
  int64_t product = 1;
  bool zero = false;
  for (int64_t d : shape) {
    require(d >= 0, "accepted shape has dimensions >= 0");
    if (d == 0) zero = true;
    else require(!__builtin_mul_overflow(product, d, &product), "accepted shape's element count fits in int64");
  }
  return zero ? 0 : product;
}

// core/safetensors: read_safetensors on the bytes as a file.
inline void feed_safetensors(std::string_view bytes) {
  const SafetensorsFile file = read_safetensors(scratch_file().set(bytes));
  for (const auto& [name, t] : file.tensors) require(t.numel() == checked_numel(t.shape()), "tensor numel");
}

// core/safetensors: read_npy_int on the bytes as a file.
inline void feed_npy(std::string_view bytes) {
  Shape shape;
  const std::vector<int32_t> values = read_npy_int(scratch_file().set(bytes), shape);
  require(static_cast<int64_t>(values.size()) == checked_numel(shape), "npy values match the shape");
}

// data/cmudict: parse_cmudict, then the vocabularies and examples built from what it kept.
inline void feed_cmudict(std::string_view bytes) {
  std::istringstream in{std::string(bytes)};
  const Cmudict dict = parse_cmudict(in, "fuzz-input");
  require(dict.stats.words == static_cast<int64_t>(dict.entries.size()), "stats.words == entries");
  for (size_t i = 0; i < dict.entries.size(); ++i) {
    require(!dict.entries[i].pronunciations.empty(), "every word has a pronunciation");
    if (i) require(dict.entries[i - 1].word < dict.entries[i].word, "entries sorted and distinct");
  }
  const G2pVocabs vocabs = build_g2p_vocabs(dict.entries);
  const std::vector<Example> examples = make_g2p_examples(dict.entries, vocabs);
  require(static_cast<int64_t>(examples.size()) == dict.stats.pronunciations, "one example per pronunciation");
}

// data/g014b2b: load_g014b2b on a directory holding the two files, the input split at its first
// NUL byte (train before, test after; no NUL: an empty test file). Checksums are off, as only the
// shipped files would pass them.
inline void feed_g014b2b(std::string_view bytes) {
  const size_t nul = bytes.find('\0');
  const ScratchDir& dir = scratch_dir();
  dir.write(kG014b2bTrainFile, bytes.substr(0, nul));
  dir.write(kG014b2bTestFile, nul == std::string_view::npos ? std::string_view() : bytes.substr(nul + 1));
  G014b2bOptions options;
  options.dir = dir.path().string();
  options.train_sha256 = options.test_sha256 = "";
  const G014b2bSplit split = load_g014b2b(options);
  require(split.split.train.size() + split.split.valid.size() ==
              static_cast<size_t>(split.train_stats.words), "train + valid == train file's words");
  require(split.split.test.size() == static_cast<size_t>(split.test_stats.words), "test words");
}

// data/bible: parse_kjv_listing (the output of `bible -f`), then the character streams.
inline void feed_kjv(std::string_view bytes) {
  const std::vector<KjvBook> books = parse_kjv_listing(std::string(bytes));
  const CharLmStreams streams = make_kjv_char_streams(books);
  for (const auto* side : {&streams.train, &streams.valid, &streams.test})
    for (int32_t id : *side) require(id >= 0 && id < streams.vocab.size(), "char id in the vocabulary");
}

#ifdef SCALELAB_FEED_CONFIG
// train/run_config: the input is a TOML config file, optionally followed by a line "#--set" and
// one `--set` assignment per line after it; parsed by load_run_config as the CLI does. An accepted
// config must survive the run directory's round trip: its resolved form written as TOML
// (json_to_toml, as config.toml) and read back must resolve to the same config.
inline void feed_config(std::string_view bytes) {
  const std::string_view marker = "\n#--set\n";
  const size_t at = bytes.find(marker);
  ConfigSources sources;
  sources.path = scratch_file().set(bytes.substr(0, at));
  if (at != std::string_view::npos) {
    std::string_view rest = bytes.substr(at + marker.size());
    while (!rest.empty()) {
      const size_t nl = rest.find('\n');
      sources.overrides.emplace_back(rest.substr(0, nl));
      rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    }
  }
  const RunConfig config = load_run_config(sources);
  const Json resolved = run_config_to_json(config);
  ConfigSources again;
  again.path = scratch_file().set(json_to_toml(resolved));
  require(run_config_to_json(load_run_config(again)) == resolved, "resolved config round-trips through TOML");
}
#endif

// One libFuzzer execution: feeds the bytes to a reader and decides what is a finding. A clean
// scalelab::Error is the expected rejection; a broken invariant always escapes (libFuzzer saves the
// input); a raw library exception escapes too unless SCALELAB_FUZZ_ALLOW_FOREIGN is set.
inline int run_one(void (*feed)(std::string_view), const uint8_t* data, size_t size) {
  static const bool allow_foreign = foreign_exceptions_allowed();
  try {
    feed({reinterpret_cast<const char*>(data), size});
  } catch (const Error&) {
  } catch (const InvariantFailed&) {
    throw;
  } catch (const std::exception&) {
    if (!allow_foreign) throw;
  }
  return 0;
}

}  // namespace scalelab::fuzz
