// A device family (cpu, cuda): its op kernels, the memory its tensors live in, the
// native streams behind the executor's lanes, and a description of the device.
// Convolution algorithms are registered per backend in the Registry.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/base/MemorySpace.h"
#include "core/base/OpKernels.h"
#include "core/base/Ranks.h"
#include "profiler/Roofline.h"

namespace tunescope {

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  // Human-readable device, e.g. "AMD EPYC 7B13, 2 cores, OpenBLAS 0.3.21, FFTW 3.3.10".
  virtual std::string device_description() const = 0;
  virtual OpKernels& ops() = 0;
  // The ops that run on host memory on a host thread: what the update on the host
  // (RunConfig update_on = host) runs SGD with, on pinned copies in staging_memory().
  // A backend whose ops work on host memory (cpu) is its own host backend.
  virtual OpKernels& host_ops() { return ops(); }

  // Where the engine allocates tensors, workspaces and saved spectra (of device 0).
  virtual MemorySpace& memory() { return host_memory(); }
  // Batch split: the device each of `replicas` replicas runs on (its tensors in
  // device_memory(device), its lanes' streams on it); see core/base/ReplicaPlacement.h.
  // Throws Error(usage) naming the counts when the backend cannot place them.
  virtual std::vector<int> replica_devices(int replicas) {
    return std::vector<int>(static_cast<size_t>(replicas), 0);
  }
  virtual MemorySpace& device_memory(int device) { return memory(); }
  // Host memory the data loader fills batches in before their upload: page-locked on
  // cuda, so the upload is an asynchronous DMA on the lane's stream.
  virtual MemorySpace& staging_memory() { return host_memory(); }
  // The native stream (cudaStream_t) of executor lane `lane` on `device`, owned by the
  // backend and handed to kernels in ExecContext::stream; null where kernels run on the
  // lane's own thread (cpu).
  virtual NativeStream lane_stream(int lane, int device) { return {}; }
  // Called on each lane's thread before its first task: makes `device` the thread's
  // current device (cudaSetDevice), so its kernels and allocations land there.
  virtual void bind_thread(int device) {}
  // Blocks the calling thread until the work enqueued on `stream` has finished. The
  // executor calls it before an event recorded on the lane completes and before a lane
  // goes idle, so events and synchronize() order device work as they order host work.
  virtual void finish_stream(NativeStream stream) {}
  // The all-reduce of gradients across ranks (processes) for a rank whose tensors live on
  // `device`: the host all-reduce where the host reads the backend's memory (cpu); cuda
  // uses NCCL, bootstrapped over `communicator`. Collective: every rank calls it.
  virtual std::unique_ptr<RankReducer> make_rank_reducer(Communicator& communicator, int device) {
    return make_host_rank_reducer(communicator);
  }

  // Measures the device's peaks on `threads` threads within about `seconds`: fp32 FMA
  // throughput of each instruction-set path it runs, and memory bandwidth (one entry
  // per path). Empty where the backend has no probe. Slow: callers cache the result.
  virtual std::vector<profiler::MachinePeak> measure_peaks(int threads, double seconds) {
    return {};
  }
};

}  // namespace tunescope
