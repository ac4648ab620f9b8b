// The cross-device collective of the cuda backend: the gradient reduction of replicas
// that run one per device, through NCCL (ncclCommInitAll over the replicas' devices,
// then ncclGroupStart / ncclReduce per device / ncclGroupEnd).
//
// Why a reduce to one device and not an all-reduce: the engine's update (Trainer.h) sums
// the replicas' gradients into replica 0's, runs SGD there and broadcasts the new weights;
// only replica 0 reads the sum, so an all-reduce would move the sum to every device for
// nobody, and write into the other replicas' gradients, which OpKernels::allreduce_sum
// promises to leave alone.
//
// Streams: the root's reduction runs on the caller's stream (the update lane's); each
// other device's on a collective stream of that device, which the caller's stream then
// waits for (cudaStreamWaitEvent), so finishing the caller's stream finishes the whole
// collective. Its inputs are ready: the engine's events finish the replicas' lanes before
// the update lane runs. One thread at a time (the update lane) may call reduce_sum.
// Without NCCL (TUNESCOPE_HAVE_NCCL off) it builds and reduce_sum throws, naming why.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>

namespace tunescope::cuda {

class DeviceCollectives {
 public:
  DeviceCollectives();
  ~DeviceCollectives();
  DeviceCollectives(const DeviceCollectives&) = delete;
  DeviceCollectives& operator=(const DeviceCollectives&) = delete;

  // Empty when this build has a cross-device reduction; otherwise why not.
  static std::string unavailable_reason();

  // out (on devices[root], the caller's current device, ordered on root_stream) = sum of
  // sources[i] (on devices[i], one per device), `count` floats each; out may be
  // sources[root]. Communicators are made on the first call for a set of devices.
  void reduce_sum(std::span<const float* const> sources, std::span<const int> devices, size_t root,
                  float* out, int64_t count, cudaStream_t root_stream);

 private:
  struct Group;
  std::unique_ptr<Group> group_;
};

}  // namespace tunescope::cuda
