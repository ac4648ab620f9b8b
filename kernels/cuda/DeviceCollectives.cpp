#include "kernels/cuda/DeviceCollectives.h"

#include <algorithm>
#include <vector>

#include "core/base/Error.h"
#include "kernels/cuda/CudaCheck.h"
#include "kernels/cuda/CudaDevice.h"

namespace tunescope::cuda {

namespace {
std::string device_list(std::span<const int> devices) {
  std::string text;
  for (int d : devices) {
    if (!text.empty()) text += ',';
    text += std::to_string(d);
  }
  return text;
}
}  // namespace

#ifdef TUNESCOPE_HAVE_NCCL

struct DeviceCollectives::Group {
  std::vector<int> devices;
  std::vector<ncclComm_t> comms;
  std::vector<cudaStream_t> streams;  // per device, for the ranks other than the caller's
  std::vector<cudaEvent_t> done;

  explicit Group(std::span<const int> list) : devices(list.begin(), list.end()) {
    const int n = static_cast<int>(devices.size());
    comms.assign(devices.size(), nullptr);
    int caller = 0;  // ncclCommInitAll visits every device; the lane stays bound to its own
    TS_CUDA_CHECK(cudaGetDevice(&caller));
    const ncclResult_t status = ncclCommInitAll(comms.data(), n, devices.data());
    TS_CUDA_CHECK(cudaSetDevice(caller));
    TS_CUDA_CHECK_CTX(status,
                      cat("creating NCCL communicators for devices ", device_list(devices)));
    for (int d : devices) {
      const CurrentDevice scope(d);
      cudaStream_t s = nullptr;
      TS_CUDA_CHECK_CTX(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking),
                        cat("creating the collective stream of device ", d));
      streams.push_back(s);
      cudaEvent_t e = nullptr;
      TS_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
      done.push_back(e);
    }
  }
  ~Group() {
    for (size_t i = 0; i < streams.size(); ++i) {
      const CurrentDevice scope(devices[i]);
      cudaStreamSynchronize(streams[i]);
      cudaEventDestroy(done[i]);
      cudaStreamDestroy(streams[i]);
    }
    for (ncclComm_t comm : comms)
      if (comm) ncclCommDestroy(comm);
  }
};

std::string DeviceCollectives::unavailable_reason() { return {}; }

void DeviceCollectives::reduce_sum(std::span<const float* const> sources,
                                   std::span<const int> devices, size_t root, float* out,
                                   int64_t count, cudaStream_t root_stream) {
  if (sources.size() != devices.size() || root >= devices.size())
    fail(ErrorKind::runtime, "device reduction: ", sources.size(), " sources on ", devices.size(),
         " devices, root ", root);
  if (!group_ ||
      !std::equal(group_->devices.begin(), group_->devices.end(), devices.begin(), devices.end())) {
    group_.reset();
    group_ = std::make_unique<Group>(devices);
  }
  Group& g = *group_;
  const auto n = static_cast<size_t>(count);
  const std::string context =
      cat("reducing ", count, " floats over devices ", device_list(devices));
  TS_CUDA_CHECK(ncclGroupStart());
  for (size_t i = 0; i < devices.size(); ++i) {
    const ncclResult_t status =
        ncclReduce(sources[i], i == root ? out : nullptr, n, ncclFloat, ncclSum,
                   static_cast<int>(root), g.comms[i], i == root ? root_stream : g.streams[i]);
    if (status != ncclSuccess) {
      ncclGroupEnd();  // close the group before reporting, so NCCL stays usable
      TS_CUDA_CHECK_CTX(status, context);
    }
  }
  TS_CUDA_CHECK_CTX(ncclGroupEnd(), context);
  // The caller's stream waits for the other devices' halves, so finishing it finishes all.
  for (size_t i = 0; i < devices.size(); ++i) {
    if (i == root) continue;
    {
      const CurrentDevice scope(devices[i]);
      TS_CUDA_CHECK(cudaEventRecord(g.done[i], g.streams[i]));
    }
    TS_CUDA_CHECK(cudaStreamWaitEvent(root_stream, g.done[i], 0));
  }
}

#else  // built without NCCL

struct DeviceCollectives::Group {};

std::string DeviceCollectives::unavailable_reason() {
  return "tunescope was built without NCCL (not found next to the CUDA toolkit at configure time)";
}

void DeviceCollectives::reduce_sum(std::span<const float* const>, std::span<const int> devices,
                                   size_t, float*, int64_t, cudaStream_t) {
  fail(ErrorKind::unsupported, "cannot reduce gradients over devices ", device_list(devices), ": ",
       unavailable_reason());
}

#endif

DeviceCollectives::DeviceCollectives() = default;
DeviceCollectives::~DeviceCollectives() = default;

}  // namespace tunescope::cuda
