// What CUDA devices this process can use and what they are: the device probe behind
// `--backend cuda` / `--backend auto`, and the one-line device description of traces,
// results and `list-algorithms` (name, SMs, memory, compute capability, library versions).
#pragma once

#include <cstddef>
#include <string>

namespace tunescope::cuda {

struct CudaDeviceInfo {
  int index = 0;
  std::string name;
  int sm_count = 0;
  size_t memory_bytes = 0;
  int compute_major = 0;
  int compute_minor = 0;
};

// Versions as the libraries encode them (0 = unknown, e.g. no driver installed).
struct CudaLibraryVersions {
  int driver = 0;    // cudaDriverGetVersion: 1000 * major + 10 * minor
  int runtime = 0;   // cudaRuntimeGetVersion: same encoding
  size_t cudnn = 0;  // cudnnGetVersion: 10000 * major + 100 * minor + patch (cuDNN 9)
  int cublas = 0;    // 10000 * major + 100 * minor + patch, from cublasGetProperty
  int cufft = 0;     // cufftGetVersion: 1000 * major + 100 * minor + patch
  int nccl = 0;      // ncclGetVersion: 10000 * major + 100 * minor + patch (NCCL >= 2.9)
};

// Empty when at least one device can be used; otherwise why not, as one line that
// starts with "no CUDA device: " followed by the driver's own message.
std::string cuda_unavailable_reason();

// The number of usable devices; throws Error(usage) with cuda_unavailable_reason() when
// there are none.
int require_cuda_devices();

// Throws a CUDA runtime Error when `index` cannot be queried.
CudaDeviceInfo query_cuda_device(int index);
// Never throws: a library that cannot answer leaves its version 0.
CudaLibraryVersions query_library_versions();

// "13.0" from 13000; "9.19.0" from 91900; "2.28.9" from 22809; "13.1.0" from 130100;
// "12.0.0" from 12000; "unknown" for 0.
std::string format_cuda_version(int version);
std::string format_cudnn_version(size_t version);
std::string format_nccl_version(int version);
std::string format_cublas_version(int version);
std::string format_cufft_version(int version);

// Makes `device` current on the calling thread for its lifetime and restores the one
// before: host calls aimed at one device (allocation, copies, stream creation) leave the
// thread's device as they found it, so a lane thread stays bound to its replica's device.
class CurrentDevice {
 public:
  explicit CurrentDevice(int device);
  ~CurrentDevice();
  CurrentDevice(const CurrentDevice&) = delete;
  CurrentDevice& operator=(const CurrentDevice&) = delete;

 private:
  int previous_ = 0;
  bool restore_ = false;
};

// "NVIDIA H200 (device 0), 132 SMs, 139.8 GiB, compute capability 9.0; driver 13.0,
// runtime 13.0, cuDNN 9.19.0, cuBLAS 13.1.0, cuFFT 12.0.0, NCCL 2.28.9"
std::string describe_cuda_device(const CudaDeviceInfo& device, const CudaLibraryVersions& versions);

}  // namespace tunescope::cuda
