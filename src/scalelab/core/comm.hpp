// core/comm: the processes of one job and the few collective operations scalelab needs from them
// (data-parallel training, the ledger's work queue). Two implementations: a single process (always
// built) and MPI's MPI_COMM_WORLD (built with SCALELAB_MPI, used when the process was launched by
// mpirun). Nothing above this layer talks to MPI directly.
//
// Determinism: allreduce_sum over MPI is MPI_Allreduce(MPI_SUM). For a fixed number of ranks and a
// fixed message size OpenMPI's tuned component picks the same algorithm and the same reduction
// order every time, and every rank receives the same bits (ring and recursive-doubling schedules
// combine the same partial sums, and IEEE addition is commutative), so a run is bit-identical
// across repetitions at the same N. The order differs from a single process's sum: results agree
// with -np 1 to float rounding only (docs/scaling.md states the tolerance).
#pragma once
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace scalelab {

struct CommMessage {
  int source = 0, tag = 0;
  std::string bytes;
};

class Comm {
 public:
  virtual ~Comm() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // In place: x[i] <- sum over ranks of x[i]; every rank gets the same values.
  virtual void allreduce_sum(float* x, int64_t n) = 0;
  virtual void allreduce_sum(double* x, int64_t n) = 0;
  // bytes <- root's bytes on every rank.
  virtual void broadcast(std::string& bytes, int root) = 0;
  virtual void barrier() = 0;
  // Every rank's bytes, indexed by rank, on every rank.
  virtual std::vector<std::string> allgather(const std::string& bytes) = 0;
  // Point to point (the ledger's work queue): send, a blocking receive from one source, and a
  // non-blocking receive from any source (nullopt: nothing has arrived).
  virtual void send(int dest, int tag, const std::string& bytes) = 0;
  virtual CommMessage receive(int source) = 0;
  virtual std::optional<CommMessage> try_receive() = 0;
  // After an error: true if every rank reaches this call within `seconds` (they all hit the same
  // error, so the job can end normally), false if some rank is elsewhere (then abort()).
  virtual bool all_arrive_within(double seconds) = 0;
  // Ends every rank of the job at once with `code` (MPI_Abort); a single process just exits.
  [[noreturn]] virtual void abort(int code) = 0;
};

// One process: rank 0 of 1. The collectives are no-ops; point-to-point calls are errors.
std::unique_ptr<Comm> single_process_comm();

// true when this binary was built with MPI (CMake option SCALELAB_MPI).
bool built_with_mpi();
// "Open MPI v4.1.4 ..." or "not built with MPI".
std::string mpi_library_version();
// The number of ranks mpirun (or another MPI launcher) started, read from its environment
// variables; 0 when the process was not launched by one.
int launcher_world_size();
// Ranks of this job on this machine (OMPI_COMM_WORLD_LOCAL_SIZE), 1 when unknown.
int launcher_local_size();

// The process's communicator. Launched by an MPI launcher: initialises MPI (MPI_Init_thread,
// funneled) and returns MPI_COMM_WORLD; MPI_Finalize runs when the returned object is destroyed.
// Otherwise a single process. Launched by mpirun with more than one rank, a binary built without
// MPI throws Error saying so (rather than running N copies that would overwrite each other).
std::unique_ptr<Comm> make_world_comm(int* argc, char*** argv);

// Every rank passes its error ("" for none); if any is non-empty, every rank throws Error with the
// lowest rank's message (prefixed "rank k: " when k > 0).
void throw_first_error(Comm& comm, const std::string& local_error);

// Runs `body` on every rank and agrees on the outcome: if it throws on any rank, every rank throws
// the first (lowest rank's) message, so that a refused command ends on every rank together.
template <class Body>
void agree_on_errors(Comm& comm, Body&& body) {
  std::string local_error;
  try {
    body();
  } catch (const std::exception& e) {
    if (comm.size() == 1) throw;
    local_error = e.what();
    if (local_error.empty()) local_error = "unknown error";
  }
  throw_first_error(comm, local_error);
}

// Throws Error on every rank unless `text` is byte-identical on all of them; `what` names it
// ("binary and config") and the message names the first rank that differs from rank 0.
void require_same_on_all_ranks(Comm& comm, const std::string& what, const std::string& text);

// FNV-1a 64-bit, for the digests compared across ranks.
uint64_t fnv1a64(const void* data, size_t n, uint64_t h = 1469598103934665603ull);

}  // namespace scalelab

