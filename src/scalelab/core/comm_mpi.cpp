// core/comm_mpi: Comm over MPI_COMM_WORLD (built only with SCALELAB_MPI). Every MPI call is made
// from the thread that called make_world_comm (MPI_THREAD_FUNNELED): OpenMP threads and the
// ledger's local worker thread never call MPI.
#ifdef SCALELAB_MPI
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <thread>

#include "scalelab/core/comm.hpp"
#include "scalelab/core/error.hpp"

namespace scalelab {
namespace {

constexpr int64_t kChunk = int64_t{1} << 28;  // MPI counts are int: large buffers go in pieces

class MpiWorld final : public Comm {
 public:
  MpiWorld() {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }
  ~MpiWorld() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Finalize();
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void allreduce_sum(float* x, int64_t n) override { reduce(x, n, MPI_FLOAT); }
  void allreduce_sum(double* x, int64_t n) override { reduce(x, n, MPI_DOUBLE); }
  void broadcast(std::string& bytes, int root) override {
    long long n = static_cast<long long>(bytes.size());
    MPI_Bcast(&n, 1, MPI_LONG_LONG, root, MPI_COMM_WORLD);
    bytes.resize(static_cast<size_t>(n));
    for (long long off = 0; off < n; off += kChunk) {
      MPI_Bcast(bytes.data() + off, static_cast<int>(std::min<long long>(kChunk, n - off)), MPI_CHAR,
                root, MPI_COMM_WORLD);
    }
  }
  void barrier() override { MPI_Barrier(MPI_COMM_WORLD); }
  std::vector<std::string> allgather(const std::string& bytes) override {
    SL_CHECK(bytes.size() < size_t(INT_MAX / std::max(1, size_)), "allgather of ", bytes.size(),
             " bytes is too large");
    int n = static_cast<int>(bytes.size());
    std::vector<int> counts(size_), offsets(size_);
    MPI_Allgather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, MPI_COMM_WORLD);
    int total = 0;
    for (int r = 0; r < size_; ++r) offsets[r] = total, total += counts[r];
    std::string all(static_cast<size_t>(total), '\0');
    MPI_Allgatherv(bytes.data(), n, MPI_CHAR, all.data(), counts.data(), offsets.data(), MPI_CHAR,
                   MPI_COMM_WORLD);
    std::vector<std::string> out(size_);
    for (int r = 0; r < size_; ++r) out[r] = all.substr(offsets[r], counts[r]);
    return out;
  }
  void send(int dest, int tag, const std::string& bytes) override {
    SL_CHECK(bytes.size() < size_t(INT_MAX), "message of ", bytes.size(), " bytes is too large");
    MPI_Send(bytes.data(), static_cast<int>(bytes.size()), MPI_CHAR, dest, tag, MPI_COMM_WORLD);
  }
  CommMessage receive(int source) override {
    MPI_Status st;
    MPI_Probe(source, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
    return take(st);
  }
  std::optional<CommMessage> try_receive() override {
    int flag = 0;
    MPI_Status st;
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
    if (!flag) return std::nullopt;
    return take(st);
  }
  bool all_arrive_within(double seconds) override {
    MPI_Request req;
    MPI_Ibarrier(MPI_COMM_WORLD, &req);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    for (;;) {
      int done = 0;
      MPI_Test(&req, &done, MPI_STATUS_IGNORE);
      if (done) return true;
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  [[noreturn]] void abort(int code) override {
    MPI_Abort(MPI_COMM_WORLD, code);
    std::_Exit(code);  // MPI_Abort does not return; this keeps [[noreturn]] honest
  }

 private:
  int rank_ = 0, size_ = 1;
  void reduce(void* x, int64_t n, MPI_Datatype type) {
    const int64_t elem = type == MPI_FLOAT ? 4 : 8;
    for (int64_t off = 0; off < n; off += kChunk) {
      MPI_Allreduce(MPI_IN_PLACE, static_cast<char*>(x) + off * elem,
                    static_cast<int>(std::min(kChunk, n - off)), type, MPI_SUM, MPI_COMM_WORLD);
    }
  }
  CommMessage take(const MPI_Status& probed) {
    int count = 0;
    MPI_Status st = probed;
    MPI_Get_count(&st, MPI_CHAR, &count);
    CommMessage m{.source = st.MPI_SOURCE, .tag = st.MPI_TAG, .bytes = std::string(count, '\0')};
    MPI_Recv(m.bytes.data(), count, MPI_CHAR, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD,
             MPI_STATUS_IGNORE);
    return m;
  }
};

}  // namespace

bool built_with_mpi() { return true; }

std::string mpi_library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  MPI_Get_library_version(text, &len);
  std::string v(text, len);
  if (const size_t nl = v.find_first_of(",\n"); nl != std::string::npos) v.resize(nl);
  return v;
}

std::unique_ptr<Comm> make_world_comm(int* argc, char*** argv) {
  // Not launched by mpirun: a plain single process (no MPI_Init, so no singleton daemon is started).
  if (launcher_world_size() == 0) return single_process_comm();
  int provided = 0;
  MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
  if (provided < MPI_THREAD_FUNNELED) {
    MPI_Finalize();
    throw_error("the MPI library offers no MPI_THREAD_FUNNELED support (provided ", provided,
                "); scalelab's ranks run OpenMP threads beside MPI");
  }
  return std::make_unique<MpiWorld>();
}

}  // namespace scalelab
#endif  // SCALELAB_MPI
