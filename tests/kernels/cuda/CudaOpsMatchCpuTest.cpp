// Every CUDA op against the CPU op on the same inputs, in both layouts: the shared op
// cases (tests/kernels/cpu/CpuOpsCases.h) run once with host tensors on the CPU ops
// and once with device tensors on the CUDA ops, on a lane stream as the executor runs
// them. Tolerance: each case's backend_tolerance, relative to max(1, |cpu value|) —
// 1e-5 for ops whose terms the device combines in another order, 2e-4 for the fc
// forward GEMM over 7752 terms; the data-movement cases must match bit for bit.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "CudaTestSupport.h"
#include "core/base/ThreadPool.h"
#include "kernels/cpu/CpuOps.h"
#include "kernels/cuda/CudaMemory.h"
#include "kernels/cuda/CudaOps.h"
#include "profiler/Tracer.h"
#include "tests/kernels/cpu/CpuOpsCases.h"
#include "tests/kernels/cpu/CpuOpsTestSupport.h"

namespace tunescope::cuda {
namespace {

using cpu::test_support::OpCase;

void expect_cuda_matches_cpu(const std::vector<OpCase>& cases) {
  ThreadPool pool(2);
  const ExecContext host_ctx{pool};
  cpu::CpuOps cpu_ops;
  CudaOps cuda_ops;
  LaneStreams streams(0);
  const ExecContext device_ctx{pool, nullptr, 0, 1, NativeStream(streams.stream(1))};
  CudaMemory& memory = CudaMemory::of_device(0);
  for (const OpCase& c : cases)
    for (Layout layout : {Layout::NCHW, Layout::NHWC}) {
      SCOPED_TRACE(c.name + " " + to_string(layout));
      const auto want = c.run(cpu_ops, host_ctx, layout, host_memory());
      const auto got = c.run(cuda_ops, device_ctx, layout, memory);
      LaneStreams::finish(device_ctx.stream.as<CUstream_st>());
      ASSERT_EQ(want.size(), got.size());
      for (size_t i = 0; i < want.size(); ++i)
        EXPECT_TRUE(cpu::test_support::logically_near(got[i], want[i], c.backend_tolerance))
            << "output " << i;
    }
}

TEST(CudaOpsMatchCpu, EveryOpInBothLayouts) {
  TS_SKIP_WITHOUT_CUDA_DEVICE();
  expect_cuda_matches_cpu(cpu::test_support::op_cases());
}

TEST(CudaOpsMatchCpu, CollectivesBetweenDeviceTensors) {
  TS_SKIP_WITHOUT_CUDA_DEVICE();
  expect_cuda_matches_cpu(cpu::test_support::collective_cases());
}

// Each op is traced as a phase range named as the contract's kernel, on the context's
// device and lane (CUPTI records the device kernels inside it).
TEST(CudaOpsMatchCpu, EveryOpRecordsItsContractNameAsARange) {
  TS_SKIP_WITHOUT_CUDA_DEVICE();
  ThreadPool pool(1);
  profiler::Tracer tracer;
  LaneStreams streams(0);
  const ExecContext ctx{pool, &tracer, 0, 2, NativeStream(streams.stream(2))};
  CudaOps ops;
  for (const OpCase& c : cpu::test_support::op_cases()) {
    SCOPED_TRACE(c.name);
    tracer.start();
    c.run(ops, ctx, Layout::NHWC, CudaMemory::of_device(0));
    tracer.stop();
    const profiler::Trace trace = tracer.collect({});
    std::vector<std::string> names;
    for (const profiler::Range& r : trace.ranges) {
      names.push_back(r.name);
      EXPECT_EQ(r.category, profiler::RangeCategory::phase) << r.name;
      EXPECT_EQ(r.lane, 2) << r.name;
    }
    std::vector<std::string> expected = c.kernels;
    std::sort(names.begin(), names.end());
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(names, expected);
  }
}

// The null stream (per-layer find runs ops without a backend stream) works too.
TEST(CudaOpsMatchCpu, OnTheDefaultStream) {
  TS_SKIP_WITHOUT_CUDA_DEVICE();
  ThreadPool pool(1);
  CudaOps cuda_ops;
  cpu::CpuOps cpu_ops;
  const ExecContext device_ctx{pool};
  const Shape4 shape{2, 3, 5, 7};
  const Tensor x = cpu::test_support::random_tensor(shape, Layout::NHWC, 7);
  Tensor want(shape, Layout::NHWC), got(shape, Layout::NHWC, CudaMemory::of_device(0));
  cpu_ops.relu_forward(device_ctx, x, want);
  cuda_ops.relu_forward(device_ctx, to_memory(x, CudaMemory::of_device(0)), got);
  EXPECT_TRUE(cpu::test_support::bitwise_equal(to_host(got), want));
}

}  // namespace
}  // namespace tunescope::cuda
