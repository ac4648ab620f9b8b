// The device probe, the "cuda" backend's registration and the device description:
// without a device the backend must refuse with "no CUDA device: <driver message>"
// (usage, CLI exit 2) and auto must pick cpu; with one, it runs on the device's memory
// and per-lane streams.
#include "kernels/cuda/CudaDevice.h"

#include <cudnn.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>

#include "CudaTestSupport.h"
#include "core/base/BackendChoice.h"
#include "core/base/Error.h"
#include "core/base/Registry.h"

namespace tunescope::cuda {
namespace {

TEST(CudaVersions, FormatAsTheLibrariesNumberThemselves) {
  EXPECT_EQ(format_cuda_version(13000), "13.0");
  EXPECT_EQ(format_cuda_version(12080), "12.8");
  EXPECT_EQ(format_cuda_version(0), "unknown");
  EXPECT_EQ(format_cudnn_version(91900), "9.19.0");
  EXPECT_EQ(format_cudnn_version(8907), "8.9.7");
  EXPECT_EQ(format_nccl_version(22809), "2.28.9");
  EXPECT_EQ(format_nccl_version(2804), "2.8.4");
  EXPECT_EQ(format_cublas_version(130100), "13.1.0");
  EXPECT_EQ(format_cufft_version(12000), "12.0.0");
  EXPECT_EQ(format_cufft_version(11203), "11.2.3");
}

TEST(CudaVersions, LibrariesAnswerWithoutADevice) {
  // cuDNN, cuBLAS, cuFFT and NCCL report their versions from the host library alone.
  const CudaLibraryVersions v = query_library_versions();
  EXPECT_EQ(v.cudnn / 10000, size_t{CUDNN_MAJOR});
  EXPECT_GT(v.cublas, 0);
  EXPECT_GT(v.cufft, 0);
#ifdef TUNESCOPE_HAVE_NCCL
  EXPECT_GT(v.nccl, 0);
#else
  EXPECT_EQ(v.nccl, 0);  // built without NCCL: not asked
#endif
  EXPECT_GT(v.runtime, 0);
}

TEST(CudaDescription, NamesDeviceResourcesAndVersions) {
  CudaDeviceInfo device;
  device.index = 1;
  device.name = "NVIDIA H200";
  device.sm_count = 132;
  device.memory_bytes = size_t{150} * 1024 * 1024 * 1024;
  device.compute_major = 9;
  device.compute_minor = 0;
  CudaLibraryVersions v;
  v.driver = 13000;
  v.runtime = 13000;
  v.cudnn = 91900;
  v.cublas = 130100;
  v.cufft = 12000;
  v.nccl = 22809;
  EXPECT_EQ(describe_cuda_device(device, v),
            "NVIDIA H200 (device 1), 132 SMs, 150.0 GiB, compute capability 9.0; driver 13.0, "
            "runtime 13.0, "
            "cuDNN 9.19.0, cuBLAS 13.1.0, cuFFT 12.0.0, NCCL 2.28.9");
}

TEST(CudaBackend, WithoutADeviceRefusesWithTheDriversReason) {
  const auto names = Registry::instance().backends();
  ASSERT_NE(std::find(names.begin(), names.end(), "cuda"), names.end());
  const std::string reason = cuda_unavailable_reason();
  if (reason.empty())
    GTEST_SKIP() << "a CUDA device is present (CudaBackend.RunsOnTheDevicesMemoryAndStreams)";
  try {
    Registry::instance().make_backend("cuda");
    FAIL() << "the cuda backend constructed without a device";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::usage);
    EXPECT_EQ(std::string(e.what()), reason);
    EXPECT_EQ(reason.rfind("no CUDA device: ", 0), 0u) << reason;
  }
}

TEST(CudaBackend, AutoChoosesCudaExactlyWhenADeviceIsUsable) {
  const BackendChoice choice = choose_backend("auto");
  if (cuda_unavailable_reason().empty()) {
    EXPECT_EQ(choice.name, "cuda");
    return;
  }
  EXPECT_EQ(choice.name, "cpu");
  ASSERT_FALSE(choice.passed_over.empty());
  EXPECT_EQ(choice.passed_over[0].rfind("cuda: no CUDA device: ", 0), 0u) << choice.passed_over[0];
}

// cuda has no "direct": its conv layers default to cuDNN's implicit GEMM, which must be
// one of its registered algorithms (no device needed to check the registration).
TEST(CudaBackend, DefaultsToARegisteredConvAlgorithm) {
  const Registry& registry = Registry::instance();
  EXPECT_EQ(registry.default_conv_algorithm("cuda"), "cudnn:implicit_gemm");
  const auto cuda = registry.conv_algorithms("cuda");
  EXPECT_NE(std::find(cuda.begin(), cuda.end(), "cudnn:implicit_gemm"), cuda.end());
  EXPECT_EQ(std::find(cuda.begin(), cuda.end(), "direct"), cuda.end());
  EXPECT_EQ(registry.default_conv_algorithm("cpu"), "direct");
}

TEST(CudaBackend, RunsOnTheDevicesMemoryAndStreams) {
  TS_SKIP_WITHOUT_CUDA_DEVICE();
  const std::unique_ptr<Backend> backend = Registry::instance().make_backend("cuda");
  EXPECT_EQ(backend->name(), "cuda");
  EXPECT_NE(backend->device_description().find("(device 0)"), std::string::npos)
      << backend->device_description();
  EXPECT_FALSE(backend->memory().host_accessible());
  EXPECT_EQ(backend->memory().name(), "cuda:0");
  const NativeStream lane0 = backend->lane_stream(0, 0);
  const NativeStream lane1 = backend->lane_stream(1, 0);
  EXPECT_TRUE(lane0);
  EXPECT_NE(lane0, lane1);
  EXPECT_EQ(backend->lane_stream(0, 0), lane0);  // one stream per lane, kept
  backend->finish_stream(lane0);
  backend->finish_stream(lane1);
}

TEST(CudaDevice, DescribesDeviceZero) {
  TS_SKIP_WITHOUT_CUDA_DEVICE();
  EXPECT_GE(require_cuda_devices(), 1);
  const CudaDeviceInfo device = query_cuda_device(0);
  EXPECT_FALSE(device.name.empty());
  EXPECT_GT(device.sm_count, 0);
  EXPECT_GT(device.memory_bytes, size_t{1} << 30);
  EXPECT_GE(device.compute_major, 7);
  const std::string text = describe_cuda_device(device, query_library_versions());
  EXPECT_EQ(text.find("unknown"), std::string::npos) << text;
  std::printf("device: %s\n", text.c_str());
}

TEST(CudaDevice, WithoutADeviceTheProbeSaysWhy) {
  const std::string reason = cuda_unavailable_reason();
  if (reason.empty()) GTEST_SKIP() << "a CUDA device is present";
  try {
    require_cuda_devices();
    FAIL() << "require_cuda_devices() returned without a device";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::usage);
    EXPECT_EQ(std::string(e.what()), reason);
  }
}

}  // namespace
}  // namespace tunescope::cuda
