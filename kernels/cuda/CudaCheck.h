// The one checking wrapper of the CUDA backend: every CUDA runtime, cuDNN, cuBLAS, cuFFT,
// NCCL and CUPTI status goes through check(), which turns a failure into a
// tunescope::Error carrying the call text, the library's own error string, where it was
// called and what tunescope was doing. Use the macros so the call text and place come
// for free:
//   TS_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream));
//   TS_CUDA_CHECK_CTX(cudnnCreate(&handle), "creating the cuDNN handle of device 0");
#pragma once

#include <cublas_api.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>
#include <cufft.h>
#include <cupti_result.h>
#ifdef TUNESCOPE_HAVE_NCCL
#include <nccl.h>
#endif

#include <string>
#include <string_view>

#include "core/base/Error.h"

namespace tunescope::cuda {

// Where a status came from: the call as written, its file and line, and what the caller
// was doing (may be empty).
struct CallSite {
  const char* call;
  const char* file;
  int line;
  std::string_view context = {};
};

// The library's own text for a status ("out of memory", "CUDNN_STATUS_BAD_PARAM", ...).
std::string error_string(cudaError_t status);
std::string error_string(cudnnStatus_t status);
std::string error_string(cublasStatus_t status);
std::string error_string(cufftResult status);
#ifdef TUNESCOPE_HAVE_NCCL
std::string error_string(ncclResult_t status);
#endif
std::string error_string(CUptiResult status);

// "<call> failed: <library> error <code> (<text>) while <context> [file:line]".
std::string failure_message(std::string_view library, long code, std::string_view text,
                            const CallSite& site);

// The kind of Error a failed status becomes: running out of device memory or having no
// usable device are unsupported requests of this machine; everything else is a
// runtime failure.
ErrorKind error_kind(cudaError_t status);

// Throw Error(error_kind, failure_message(...)) unless the status is success.
void check(cudaError_t status, const CallSite& site);
void check(cudnnStatus_t status, const CallSite& site);
void check(cublasStatus_t status, const CallSite& site);
void check(cufftResult status, const CallSite& site);
#ifdef TUNESCOPE_HAVE_NCCL
void check(ncclResult_t status, const CallSite& site);
#endif
void check(CUptiResult status, const CallSite& site);

}  // namespace tunescope::cuda

#define TS_CUDA_CHECK(call) ::tunescope::cuda::check((call), {#call, __FILE__, __LINE__})
#define TS_CUDA_CHECK_CTX(call, context) \
  ::tunescope::cuda::check((call), {#call, __FILE__, __LINE__, (context)})
