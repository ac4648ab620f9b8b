#include "kernels/cuda/NcclRankReducer.h"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <limits>

#include "core/base/Error.h"
#include "core/base/ExecContext.h"
#include "core/base/Tensor.h"
#include "kernels/cuda/CudaCheck.h"
#include "kernels/cuda/CudaDevice.h"
#include "kernels/cuda/CudaOpsSupport.h"
#include "profiler/Tracer.h"

namespace tunescope::cuda {

namespace {

void require_device(int device) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess || count == 0)
    fail(ErrorKind::usage, "ranks on cuda: no CUDA device visible to this rank (",
         status != cudaSuccess ? cudaGetErrorString(status) : "0 devices",
         "): the NCCL all-reduce across ranks needs one GPU per rank");
  if (device >= count)
    fail(ErrorKind::usage, "ranks on cuda: device cuda:", device, " is not visible (", count,
         " device(s))");
}

#ifdef TUNESCOPE_HAVE_NCCL
class NcclRankReducer final : public RankReducer {
 public:
  NcclRankReducer(Communicator& communicator, int device) : device_(device) {
    require_device(device);
    ncclUniqueId id{};
    if (communicator.rank() == 0) TS_CUDA_CHECK_CTX(ncclGetUniqueId(&id), "ranks: NCCL unique id");
    communicator.broadcast(std::as_writable_bytes(std::span<ncclUniqueId>(&id, 1)), 0);
    const CurrentDevice scope(device);
    TS_CUDA_CHECK_CTX(ncclCommInitRank(&comm_, communicator.size(), id, communicator.rank()),
                      cat("ranks: joining the NCCL communicator as rank ", communicator.rank(),
                          " of ", communicator.size(), " on cuda:", device));
  }
  ~NcclRankReducer() override {
    if (comm_) ncclCommDestroy(comm_);
  }

  void allreduce_sum(const ExecContext& exec, std::span<Tensor* const> tensors,
                     const char* label) override {
    // A range names the bucket; CUPTI records NCCL's kernels inside it.
    profiler::RangeScope range(exec.tracer, label, profiler::RangeCategory::phase, exec.device,
                               exec.lane);
    TS_CUDA_CHECK(ncclGroupStart());
    for (Tensor* t : tensors) {
      const ncclResult_t status =
          ncclAllReduce(t->data(), t->data(), static_cast<size_t>(t->size()), ncclFloat, ncclSum,
                        comm_, stream_of(exec));
      if (status != ncclSuccess) {
        ncclGroupEnd();  // close the group before reporting, so NCCL stays usable
        TS_CUDA_CHECK_CTX(status, cat(label, " on cuda:", device_));
      }
    }
    TS_CUDA_CHECK_CTX(ncclGroupEnd(), cat(label, " on cuda:", device_));
  }

 private:
  int device_;
  ncclComm_t comm_ = nullptr;
};
#endif

}  // namespace

std::unique_ptr<RankReducer> make_nccl_rank_reducer(Communicator& communicator, int device) {
#ifdef TUNESCOPE_HAVE_NCCL
  return std::make_unique<NcclRankReducer>(communicator, device);
#else
  require_device(device);
  fail(ErrorKind::unsupported,
       "ranks on cuda: this build has no NCCL, which the all-reduce across ranks needs on GPUs "
       "(install NCCL next to the CUDA toolkit and reconfigure)");
#endif
}

}  // namespace tunescope::cuda
