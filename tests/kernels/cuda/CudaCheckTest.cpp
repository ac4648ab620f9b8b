// The one checking wrapper: a failed status of any CUDA library becomes an Error with
// the call text, the library's text, the context and the place. No device needed.
#include "kernels/cuda/CudaCheck.h"

#include <gtest/gtest.h>

#include "CudaTestSupport.h"

namespace tunescope::cuda {
namespace {

template <typename Status>
Error error_of(Status status, std::string_view context = {}) {
  try {
    check(status, {"someCall(x, y)", "/long/build/path/Foo.cpp", 12, context});
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "no Error thrown for status " << static_cast<long>(status);
  return Error(ErrorKind::runtime, "");
}

TEST(CudaCheck, SuccessOfEveryLibraryPasses) {
  EXPECT_NO_THROW(check(cudaSuccess, {"a", "f", 1}));
  EXPECT_NO_THROW(check(CUDNN_STATUS_SUCCESS, {"a", "f", 1}));
  EXPECT_NO_THROW(check(CUBLAS_STATUS_SUCCESS, {"a", "f", 1}));
  EXPECT_NO_THROW(check(CUFFT_SUCCESS, {"a", "f", 1}));
#ifdef TUNESCOPE_HAVE_NCCL
  EXPECT_NO_THROW(check(ncclSuccess, {"a", "f", 1}));
#endif
  EXPECT_NO_THROW(check(CUPTI_SUCCESS, {"a", "f", 1}));
}

TEST(CudaCheck, RuntimeFailureNamesCallErrorContextAndPlace) {
  const Error e = error_of(cudaErrorInvalidValue, "copying layer conv1");
  const std::string text = e.what();
  EXPECT_EQ(e.kind(), ErrorKind::runtime);
  EXPECT_TRUE(contains(text, "someCall(x, y) failed: CUDA runtime error 1")) << text;
  EXPECT_TRUE(contains(text, "cudaErrorInvalidValue")) << text;
  EXPECT_TRUE(contains(text, "invalid argument")) << text;
  EXPECT_TRUE(contains(text, "while copying layer conv1")) << text;
  EXPECT_TRUE(contains(text, "[Foo.cpp:12]")) << text;
  EXPECT_FALSE(contains(text, "/long/build/path")) << text;
}

TEST(CudaCheck, NoDeviceAndOutOfMemoryAreUnsupportedNotRuntime) {
  EXPECT_EQ(error_of(cudaErrorNoDevice).kind(), ErrorKind::unsupported);
  EXPECT_EQ(error_of(cudaErrorInsufficientDriver).kind(), ErrorKind::unsupported);
  EXPECT_EQ(error_of(cudaErrorMemoryAllocation).kind(), ErrorKind::unsupported);
  EXPECT_EQ(error_of(cudaErrorLaunchFailure).kind(), ErrorKind::runtime);
}

TEST(CudaCheck, EachLibraryContributesItsOwnText) {
  EXPECT_TRUE(contains(error_of(CUDNN_STATUS_BAD_PARAM).what(), "cuDNN error"));
  EXPECT_TRUE(contains(error_of(CUDNN_STATUS_BAD_PARAM).what(), "CUDNN_STATUS_BAD_PARAM"));
  EXPECT_TRUE(
      contains(error_of(CUBLAS_STATUS_NOT_INITIALIZED).what(), "CUBLAS_STATUS_NOT_INITIALIZED"));
  EXPECT_TRUE(contains(error_of(CUFFT_INVALID_SIZE).what(), "cuFFT error 8 (CUFFT_INVALID_SIZE)"));
#ifdef TUNESCOPE_HAVE_NCCL
  EXPECT_TRUE(contains(error_of(ncclInvalidArgument).what(), "NCCL error"));
#endif
  EXPECT_TRUE(
      contains(error_of(CUPTI_ERROR_INVALID_PARAMETER).what(), "CUPTI_ERROR_INVALID_PARAMETER"));
}

TEST(CudaCheck, MacroQuotesTheCallAsWritten) {
  try {
    TS_CUDA_CHECK_CTX(cudaSetDevice(-1), "choosing a device");
    FAIL() << "cudaSetDevice(-1) succeeded";
  } catch (const Error& e) {
    EXPECT_TRUE(contains(e.what(), "cudaSetDevice(-1) failed")) << e.what();
    EXPECT_TRUE(contains(e.what(), "while choosing a device")) << e.what();
    EXPECT_TRUE(contains(e.what(), "CudaCheckTest.cpp:")) << e.what();
  }
}

}  // namespace
}  // namespace tunescope::cuda
