// Status -> text -> Error for every CUDA library the backend calls (see CudaCheck.h).
#include "kernels/cuda/CudaCheck.h"

#include <cupti.h>

#include <cstring>

namespace tunescope::cuda {

namespace {

template <typename Status>
void check_status(Status status, Status success, std::string_view library, ErrorKind kind,
                  const CallSite& site) {
  if (status == success) return;
  throw Error(kind,
              failure_message(library, static_cast<long>(status), error_string(status), site));
}

}  // namespace

std::string error_string(cudaError_t status) {
  return cat(cudaGetErrorName(status), ": ", cudaGetErrorString(status));
}

std::string error_string(cudnnStatus_t status) { return cudnnGetErrorString(status); }

std::string error_string(cublasStatus_t status) {
  return cat(cublasGetStatusName(status), ": ", cublasGetStatusString(status));
}

std::string error_string(cufftResult status) {
  // cuFFT has no error-string function; these are the names of cufft.h's enum.
  switch (status) {
    case CUFFT_SUCCESS: return "CUFFT_SUCCESS";
    case CUFFT_INVALID_PLAN: return "CUFFT_INVALID_PLAN";
    case CUFFT_ALLOC_FAILED: return "CUFFT_ALLOC_FAILED";
    case CUFFT_INVALID_TYPE: return "CUFFT_INVALID_TYPE";
    case CUFFT_INVALID_VALUE: return "CUFFT_INVALID_VALUE";
    case CUFFT_INTERNAL_ERROR: return "CUFFT_INTERNAL_ERROR";
    case CUFFT_EXEC_FAILED: return "CUFFT_EXEC_FAILED";
    case CUFFT_SETUP_FAILED: return "CUFFT_SETUP_FAILED";
    case CUFFT_INVALID_SIZE: return "CUFFT_INVALID_SIZE";
    case CUFFT_UNALIGNED_DATA: return "CUFFT_UNALIGNED_DATA";
    case CUFFT_INVALID_DEVICE: return "CUFFT_INVALID_DEVICE";
    case CUFFT_NO_WORKSPACE: return "CUFFT_NO_WORKSPACE";
    case CUFFT_NOT_IMPLEMENTED: return "CUFFT_NOT_IMPLEMENTED";
    case CUFFT_NOT_SUPPORTED: return "CUFFT_NOT_SUPPORTED";
    case CUFFT_MISSING_DEPENDENCY: return "CUFFT_MISSING_DEPENDENCY";
    case CUFFT_NVRTC_FAILURE: return "CUFFT_NVRTC_FAILURE";
    case CUFFT_NVJITLINK_FAILURE: return "CUFFT_NVJITLINK_FAILURE";
    case CUFFT_NVSHMEM_FAILURE: return "CUFFT_NVSHMEM_FAILURE";
  }
  return "unknown cuFFT status";
}

#ifdef TUNESCOPE_HAVE_NCCL
std::string error_string(ncclResult_t status) { return ncclGetErrorString(status); }
#endif

std::string error_string(CUptiResult status) {
  const char* text = nullptr;
  // cuptiGetResultString itself can fail (an unknown code): fall back to the number.
  if (cuptiGetResultString(status, &text) != CUPTI_SUCCESS || !text) return "unknown CUPTI result";
  return text;
}

std::string failure_message(std::string_view library, long code, std::string_view text,
                            const CallSite& site) {
  std::string message = cat(site.call, " failed: ", library, " error ", code, " (", text, ")");
  if (!site.context.empty()) message += cat(" while ", site.context);
  // Only the file name: full build paths make the CLI's one line unreadable.
  const char* slash = std::strrchr(site.file, '/');
  return message + cat(" [", slash ? slash + 1 : site.file, ":", site.line, "]");
}

ErrorKind error_kind(cudaError_t status) {
  switch (status) {
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
    case cudaErrorMemoryAllocation: return ErrorKind::unsupported;
    default: return ErrorKind::runtime;
  }
}

void check(cudaError_t status, const CallSite& site) {
  check_status(status, cudaSuccess, "CUDA runtime", error_kind(status), site);
}
void check(cudnnStatus_t status, const CallSite& site) {
  check_status(status, CUDNN_STATUS_SUCCESS, "cuDNN", ErrorKind::runtime, site);
}
void check(cublasStatus_t status, const CallSite& site) {
  check_status(status, CUBLAS_STATUS_SUCCESS, "cuBLAS", ErrorKind::runtime, site);
}
void check(cufftResult status, const CallSite& site) {
  check_status(status, CUFFT_SUCCESS, "cuFFT", ErrorKind::runtime, site);
}
#ifdef TUNESCOPE_HAVE_NCCL
void check(ncclResult_t status, const CallSite& site) {
  check_status(status, ncclSuccess, "NCCL", ErrorKind::runtime, site);
}
#endif
void check(CUptiResult status, const CallSite& site) {
  check_status(status, CUPTI_SUCCESS, "CUPTI", ErrorKind::runtime, site);
}

}  // namespace tunescope::cuda
