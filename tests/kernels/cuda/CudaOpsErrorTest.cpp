// The CUDA ops refuse bad arguments exactly as the CPU ops do (the shared typed suite,
// tests/kernels/cpu/OpsErrorCases.h: the checks run on the host before any device
// call, so these run without a device), and refuse tensors the device cannot read.
#include <gtest/gtest.h>

#include <string>

#include "core/base/Error.h"
#include "kernels/cuda/CudaOps.h"
#include "tests/kernels/cpu/OpsErrorCases.h"

namespace tunescope::test_support {

INSTANTIATE_TYPED_TEST_SUITE_P(Cuda, OpsErrors, cuda::CudaOps);

namespace {

TEST(CudaOpsErrors, HostTensorsAreRefusedBeforeAnyLaunch) {
  ThreadPool pool(1);
  const ExecContext ctx{pool};
  cuda::CudaOps ops;
  const Tensor x({2, 3, 4, 5}, Layout::NHWC);
  Tensor y({2, 3, 4, 5}, Layout::NHWC);
  try {
    ops.relu_forward(ctx, x, y);
    FAIL() << "relu.fwd ran on host tensors";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::runtime);
    EXPECT_EQ(std::string(e.what()), "relu.fwd: x is in host memory, not in device memory");
  }
  Tensor logits({3, 4, 1, 1}, Layout::NCHW);
  const std::vector<int32_t> labels{0, 1, 2};
  EXPECT_THROW(ops.softmax_cross_entropy(ctx, logits, labels, nullptr, nullptr), Error);
}

}  // namespace
}  // namespace tunescope::test_support
