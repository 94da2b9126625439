#include "scalelab/core/comm.hpp"

#include <cstdlib>
#include <cstring>

#include "scalelab/core/error.hpp"

namespace scalelab {
namespace {

class SingleProcess final : public Comm {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  void allreduce_sum(float*, int64_t) override {}
  void allreduce_sum(double*, int64_t) override {}
  void broadcast(std::string&, int) override {}
  void barrier() override {}
  std::vector<std::string> allgather(const std::string& bytes) override { return {bytes}; }
  void send(int dest, int, const std::string&) override {
    throw_error("internal: send to rank ", dest, " in a single-process job");
  }
  CommMessage receive(int source) override {
    throw_error("internal: receive from rank ", source, " in a single-process job");
  }
  std::optional<CommMessage> try_receive() override { return std::nullopt; }
  bool all_arrive_within(double) override { return true; }
  [[noreturn]] void abort(int code) override { std::_Exit(code); }
};

int env_int(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? std::atoi(v) : 0;
}

}  // namespace

std::unique_ptr<Comm> single_process_comm() { return std::make_unique<SingleProcess>(); }

int launcher_world_size() {
  // Open MPI's mpirun, then the PMI / PMIx variables other launchers (srun, hydra) set.
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "PMI_SIZE"})
    if (const int n = env_int(name); n > 0) return n;
  return std::getenv("PMIX_RANK") ? 1 : 0;
}

int launcher_local_size() {
  const int n = env_int("OMPI_COMM_WORLD_LOCAL_SIZE");
  return n > 0 ? n : 1;
}

uint64_t fnv1a64(const void* data, size_t n, uint64_t h) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= 1099511628211ull;
  }
  return h;
}

void throw_first_error(Comm& comm, const std::string& local_error) {
  if (comm.size() == 1) {
    if (!local_error.empty()) throw Error(local_error);
    return;
  }
  const std::vector<std::string> errors = comm.allgather(local_error);
  for (size_t r = 0; r < errors.size(); ++r) {
    if (errors[r].empty()) continue;
    throw Error(r == 0 ? errors[r] : "rank " + std::to_string(r) + ": " + errors[r]);
  }
}

void require_same_on_all_ranks(Comm& comm, const std::string& what, const std::string& text) {
  if (comm.size() == 1) return;
  const uint64_t mine = fnv1a64(text.data(), text.size());
  std::string bytes(sizeof mine, '\0');
  std::memcpy(bytes.data(), &mine, sizeof mine);
  const std::vector<std::string> all = comm.allgather(bytes);
  for (size_t r = 1; r < all.size(); ++r) {
    SL_CHECK(all[r] == all[0], "ranks 0 and ", r, " disagree on the ", what, " (their digests "
             "differ): every rank must run the same scalelab build with the same config and data");
  }
}

#ifndef SCALELAB_MPI
bool built_with_mpi() { return false; }
std::string mpi_library_version() { return "not built with MPI"; }

std::unique_ptr<Comm> make_world_comm(int*, char***) {
  const int n = launcher_world_size();
  SL_CHECK(n <= 1, "launched by mpirun with ", n, " ranks, but this scalelab was built without MPI "
           "(SCALELAB_MPI=OFF, or CMake found no MPI): install libopenmpi-dev (scripts/setup.sh) and "
           "rebuild, or run a single process without mpirun");
  return single_process_comm();
}
#endif

}  // namespace scalelab
