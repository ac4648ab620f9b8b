// The rank runtime over MPI (OpenMPI from Debian): registered with core/base/Ranks.h, so
// the engine and the front ends use ranks without including MPI.
#include <mpi.h>

#include <cstdlib>
#include <limits>
#include <string>

#include "core/base/Error.h"
#include "core/base/Ranks.h"

namespace tunescope {

namespace {

void check(int status, const char* call) {
  if (status == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(status, text, &length);
  fail(ErrorKind::runtime, "MPI: ", call, " failed: ", std::string(text, length));
}

int checked_count(size_t count, const char* call) {
  if (count > static_cast<size_t>(std::numeric_limits<int>::max()))
    fail(ErrorKind::runtime, "MPI: ", call, ": ", count, " elements exceed MPI's int count");
  return static_cast<int>(count);
}

class MpiCommunicator final : public Communicator {
 public:
  explicit MpiCommunicator(MPI_Comm comm) : comm_(comm) {
    check(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
    check(MPI_Comm_size(comm_, &size_), "MPI_Comm_size");
    MPI_Comm local;
    check(MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &local),
          "MPI_Comm_split_type");
    check(MPI_Comm_rank(local, &local_rank_), "MPI_Comm_rank");
    check(MPI_Comm_size(local, &local_size_), "MPI_Comm_size");
    MPI_Comm_free(&local);
  }
  ~MpiCommunicator() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Comm_free(&comm_);
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int local_size() const override { return local_size_; }
  int local_rank() const override { return local_rank_; }

  void allreduce_sum(std::span<float> values) override {
    check(MPI_Allreduce(MPI_IN_PLACE, values.data(), checked_count(values.size(), "MPI_Allreduce"),
                        MPI_FLOAT, MPI_SUM, comm_),
          "MPI_Allreduce");
  }
  void allreduce_sum(std::span<double> values) override {
    check(MPI_Allreduce(MPI_IN_PLACE, values.data(), checked_count(values.size(), "MPI_Allreduce"),
                        MPI_DOUBLE, MPI_SUM, comm_),
          "MPI_Allreduce");
  }
  void broadcast(std::span<std::byte> bytes, int root) override {
    check(MPI_Bcast(bytes.data(), checked_count(bytes.size(), "MPI_Bcast"), MPI_BYTE, root, comm_),
          "MPI_Bcast");
  }
  void send(std::span<const std::byte> bytes, int to) override {
    check(MPI_Send(bytes.data(), checked_count(bytes.size(), "MPI_Send"), MPI_BYTE, to, 0, comm_),
          "MPI_Send");
  }
  void receive(std::span<std::byte> bytes, int from) override {
    check(MPI_Recv(bytes.data(), checked_count(bytes.size(), "MPI_Recv"), MPI_BYTE, from, 0, comm_,
                   MPI_STATUS_IGNORE),
          "MPI_Recv");
  }
  bool has_message(int from) override {
    int waiting = 0;
    check(MPI_Iprobe(from, 0, comm_, &waiting, MPI_STATUS_IGNORE), "MPI_Iprobe");
    return waiting != 0;
  }
  std::unique_ptr<Communicator> duplicate() override {
    MPI_Comm copy;
    check(MPI_Comm_dup(comm_, &copy), "MPI_Comm_dup");
    return std::make_unique<MpiCommunicator>(copy);
  }
  [[noreturn]] void abort(int code) override {
    MPI_Abort(comm_, code);
    std::abort();  // MPI_Abort does not return; this says so to the compiler
  }

 private:
  MPI_Comm comm_;
  int rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1;
};

std::unique_ptr<Communicator> start_mpi(int& argc, char**& argv) {
  // The gradient all-reduce runs on a lane thread while the host thread reduces the
  // step's loss: two threads call MPI at once (each on its own communicator).
  int provided = 0;
  check(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided), "MPI_Init_thread");
  if (provided < MPI_THREAD_MULTIPLE)
    fail(ErrorKind::unsupported, "MPI: this MPI library gives thread level ", provided,
         ", tunescope needs MPI_THREAD_MULTIPLE (", MPI_THREAD_MULTIPLE, ")");
  MPI_Comm world;
  check(MPI_Comm_dup(MPI_COMM_WORLD, &world), "MPI_Comm_dup");
  return std::make_unique<MpiCommunicator>(world);
}

void finish_mpi() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

const RankRuntimeRegistration mpi_runtime{RankRuntime{"MPI", start_mpi, finish_mpi}};

}  // namespace

}  // namespace tunescope
