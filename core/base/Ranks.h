// Ranks: the processes of one data-parallel run started by a launcher (mpirun, srun).
// core/base holds only the interface; the MPI implementation (comm/mpi) registers
// itself as the rank runtime, so a build without MPI still knows when it was started
// as one of several ranks and says that MPI is missing (cli/main.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>

namespace tunescope {

class Tensor;
struct ExecContext;

// The collectives of one group of ranks, on host memory. Calls on one Communicator are
// made by one thread at a time, in the same order on every rank; a second thread uses a
// duplicate().
class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Ranks on this machine and this rank's place among them (for sharing its cores).
  virtual int local_size() const = 0;
  virtual int local_rank() const = 0;
  // In place: values = the elementwise sum of every rank's values.
  virtual void allreduce_sum(std::span<float> values) = 0;
  virtual void allreduce_sum(std::span<double> values) = 0;
  // bytes = root's bytes, on every rank.
  virtual void broadcast(std::span<std::byte> bytes, int root) = 0;
  // Point to point, for the clock ping-pong (core/base/ClockOffset.h).
  virtual void send(std::span<const std::byte> bytes, int to) = 0;
  virtual void receive(std::span<std::byte> bytes, int from) = 0;
  // Whether a message from `from` waits to be received, without waiting: a thread that
  // waits long for a rarely sent message polls this between sleeps, where a blocking
  // receive would spin (MPI's receives busy-poll) on a core the rank measures on.
  virtual bool has_message(int from) = 0;
  // The same ranks with collectives of their own: for use on another thread.
  virtual std::unique_ptr<Communicator> duplicate() = 0;
  // Ends every rank with `code` (after an error on one rank, the others would wait for it).
  [[noreturn]] virtual void abort(int code) = 0;
};

// The all-reduce of a run's gradients across ranks, on the backend's memory: on cpu
// through the communicator's host all-reduce, on cuda with NCCL (Backend::make_rank_reducer).
class RankReducer {
 public:
  virtual ~RankReducer() = default;
  // In place: each tensor = the sum of every rank's. `label` names the work in the trace
  // ("allreduce.bucket3"): a kernel on the cpu, a range around the device's kernels on cuda.
  virtual void allreduce_sum(const ExecContext& exec, std::span<Tensor* const> tensors,
                             const char* label) = 0;
};

// The host implementation: packs the tensors (host-accessible) into one buffer, sums it
// with one Communicator::allreduce_sum and unpacks it. Throws Error(unsupported) for a
// tensor the host cannot read.
std::unique_ptr<RankReducer> make_host_rank_reducer(Communicator& communicator);

// The launcher's environment: how many ranks it started, or 0 when it started none
// (OMPI_COMM_WORLD_SIZE from OpenMPI's mpirun, PMIX_SIZE / PMI_SIZE from PMIx, MPICH
// and Slurm's srun).
struct LauncherRanks {
  int size = 0;
  std::string variable;  // the variable that said so
};
LauncherRanks launcher_ranks();

// The rank runtime a build links (comm/mpi registers "MPI"): starts the world from main's
// arguments and finishes it at exit.
struct RankRuntime {
  std::string name;
  std::function<std::unique_ptr<Communicator>(int& argc, char**& argv)> start;
  std::function<void()> finish;
};
struct RankRuntimeRegistration {
  explicit RankRuntimeRegistration(RankRuntime runtime);
};
// Null in a build without one.
const RankRuntime* rank_runtime();

// The process's ranks for main(): started when a launcher started this process (even as
// a single rank), finished on destruction. Throws Error(usage) when a launcher
// started several ranks and the build has no rank runtime (MPI missing).
class RankWorld {
 public:
  RankWorld(int& argc, char**& argv);
  ~RankWorld();
  RankWorld(const RankWorld&) = delete;
  RankWorld& operator=(const RankWorld&) = delete;
  // Null outside a launcher: a single process.
  Communicator* communicator() const { return communicator_.get(); }
  // A failure on one rank: ends every rank (a single process just returns).
  void abort_others(int code);

 private:
  std::unique_ptr<Communicator> communicator_;
};

// The world RankWorld started (null in a single process or before it started): what the
// front ends hand their runs.
Communicator* world_communicator();

}  // namespace tunescope
