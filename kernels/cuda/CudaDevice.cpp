// Device probe and description of the CUDA backend (see CudaDevice.h).
#include "kernels/cuda/CudaDevice.h"

#include <cublas_api.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>
#include <cufft.h>
#ifdef TUNESCOPE_HAVE_NCCL
#include <nccl.h>
#endif

#include <cstdio>

#include "core/base/Error.h"
#include "kernels/cuda/CudaCheck.h"

namespace tunescope::cuda {

namespace {

std::string three_part(long major, long minor, long patch) {
  return cat(major, ".", minor, ".", patch);
}

}  // namespace

std::string cuda_unavailable_reason() {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    // The failed query leaves a sticky "last error" behind; clear it so a later,
    // unrelated check does not report it.
    cudaGetLastError();
    return cat("no CUDA device: ", cudaGetErrorString(status), " (", cudaGetErrorName(status), ")");
  }
  if (count == 0) return "no CUDA device: cudaGetDeviceCount found 0 devices";
  return {};
}

int require_cuda_devices() {
  if (std::string reason = cuda_unavailable_reason(); !reason.empty())
    throw Error(ErrorKind::usage, reason);
  int count = 0;
  TS_CUDA_CHECK(cudaGetDeviceCount(&count));
  return count;
}

CudaDeviceInfo query_cuda_device(int index) {
  cudaDeviceProp props{};
  TS_CUDA_CHECK_CTX(cudaGetDeviceProperties(&props, index), cat("describing device ", index));
  CudaDeviceInfo info;
  info.index = index;
  info.name = props.name;
  info.sm_count = props.multiProcessorCount;
  info.memory_bytes = props.totalGlobalMem;
  info.compute_major = props.major;
  info.compute_minor = props.minor;
  return info;
}

CudaLibraryVersions query_library_versions() {
  CudaLibraryVersions v;
  // Each query stands alone: a missing driver must not hide the library versions.
  if (cudaDriverGetVersion(&v.driver) != cudaSuccess) v.driver = 0;
  if (cudaRuntimeGetVersion(&v.runtime) != cudaSuccess) v.runtime = 0;
  cudaGetLastError();
  v.cudnn = cudnnGetVersion();
  int major = 0, minor = 0, patch = 0;
  if (cublasGetProperty(MAJOR_VERSION, &major) == CUBLAS_STATUS_SUCCESS &&
      cublasGetProperty(MINOR_VERSION, &minor) == CUBLAS_STATUS_SUCCESS &&
      cublasGetProperty(PATCH_LEVEL, &patch) == CUBLAS_STATUS_SUCCESS)
    v.cublas = 10000 * major + 100 * minor + patch;
  if (cufftGetVersion(&v.cufft) != CUFFT_SUCCESS) v.cufft = 0;
#ifdef TUNESCOPE_HAVE_NCCL  // without it the version stays 0: "NCCL unknown"
  if (ncclGetVersion(&v.nccl) != ncclSuccess) v.nccl = 0;
#endif
  return v;
}

std::string format_cuda_version(int version) {
  if (version <= 0) return "unknown";
  return cat(version / 1000, ".", version % 1000 / 10);
}

std::string format_cudnn_version(size_t version) {
  if (version == 0) return "unknown";
  const long v = static_cast<long>(version);
  // cuDNN 9 encodes 10000 * major + ...; cuDNN 8 and older 1000 * major + ...
  return v >= 90000 ? three_part(v / 10000, v % 10000 / 100, v % 100)
                    : three_part(v / 1000, v % 1000 / 100, v % 100);
}

std::string format_nccl_version(int version) {
  if (version <= 0) return "unknown";
  // NCCL_VERSION_CODE switched from 1000 * major + ... to 10000 * major + ... at 2.9.
  return version >= 20900 ? three_part(version / 10000, version % 10000 / 100, version % 100)
                          : three_part(version / 1000, version % 1000 / 100, version % 100);
}

std::string format_cublas_version(int version) {
  if (version <= 0) return "unknown";
  return three_part(version / 10000, version % 10000 / 100, version % 100);
}

std::string format_cufft_version(int version) {
  if (version <= 0) return "unknown";
  return three_part(version / 1000, version % 1000 / 100, version % 100);
}

CurrentDevice::CurrentDevice(int device) {
  TS_CUDA_CHECK(cudaGetDevice(&previous_));
  if (previous_ == device) return;
  TS_CUDA_CHECK_CTX(cudaSetDevice(device), cat("making device ", device, " current"));
  restore_ = true;
}

CurrentDevice::~CurrentDevice() {
  if (restore_) cudaSetDevice(previous_);
}

std::string describe_cuda_device(const CudaDeviceInfo& device,
                                 const CudaLibraryVersions& versions) {
  char memory[32];
  std::snprintf(memory, sizeof memory, "%.1f GiB",
                static_cast<double>(device.memory_bytes) / (1024.0 * 1024.0 * 1024.0));
  return cat(device.name, " (device ", device.index, "), ", device.sm_count, " SMs, ", memory,
             ", compute capability ", device.compute_major, ".", device.compute_minor, "; driver ",
             format_cuda_version(versions.driver), ", runtime ",
             format_cuda_version(versions.runtime), ", cuDNN ",
             format_cudnn_version(versions.cudnn), ", cuBLAS ",
             format_cublas_version(versions.cublas), ", cuFFT ",
             format_cufft_version(versions.cufft), ", NCCL ", format_nccl_version(versions.nccl));
}

}  // namespace tunescope::cuda
