// Every CPU op records itself on the tracer under the kernel name OpKernels.h gives it,
// with the context's device and lane, and records nothing while tracing is off.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "CpuOpsCases.h"
#include "core/base/ThreadPool.h"
#include "kernels/cpu/CpuOps.h"
#include "profiler/Tracer.h"

namespace tunescope::cpu::test_support {
namespace {

// The kernel names of the OpKernels contract, written out here on purpose: a renamed
// kernel must fail this test, not silently change the expectations.
const std::set<std::string> kContractNames{"bn.fwd",
                                           "bn.fwd_infer",
                                           "bn.bwd",
                                           "relu.fwd",
                                           "relu.bwd",
                                           "maxpool.fwd",
                                           "maxpool.bwd",
                                           "avgpool.fwd",
                                           "avgpool.bwd",
                                           "gap.fwd",
                                           "gap.bwd",
                                           "fc.fwd",
                                           "fc.bwd_data",
                                           "fc.bwd_weight",
                                           "bias.fwd",
                                           "bias.bwd",
                                           "add",
                                           "accumulate",
                                           "zero",
                                           "copy",
                                           "softmax_xent",
                                           "sgd",
                                           "transpose.nchw_to_nhwc",
                                           "transpose.nhwc_to_nchw"};

TEST(CpuOpsTracer, EveryOpRecordsItsContractName) {
  ThreadPool pool(2);
  profiler::Tracer tracer;
  const ExecContext ctx{pool, &tracer, /*device=*/0, /*lane=*/3};
  CpuOps ops;
  std::set<std::string> seen;
  for (const OpCase& c : op_cases())
    for (Layout layout : {Layout::NCHW, Layout::NHWC}) {
      SCOPED_TRACE(c.name + " " + to_string(layout));
      tracer.start();
      c.run(ops, ctx, layout, host_memory());
      tracer.stop();
      const profiler::Trace trace = tracer.collect({});
      EXPECT_TRUE(trace.ranges.empty());
      std::vector<std::string> names;
      for (const profiler::Activity& a : trace.activities) {
        names.push_back(a.name);
        seen.insert(a.name);
        EXPECT_EQ(a.kind, profiler::ActivityKind::kernel) << a.name;
        EXPECT_EQ(a.device, 0) << a.name;
        EXPECT_EQ(a.stream, 3) << a.name;
        EXPECT_LE(a.start_ns, a.end_ns) << a.name;
        EXPECT_GT(a.bytes, 0) << a.name;
      }
      std::vector<std::string> expected = c.kernels;
      std::sort(names.begin(), names.end());
      std::sort(expected.begin(), expected.end());
      EXPECT_EQ(names, expected);
    }
  EXPECT_EQ(seen, kContractNames);
}

TEST(CpuOpsTracer, RecordsNothingWhenStoppedOrAbsent) {
  ThreadPool pool(1);
  profiler::Tracer tracer;
  CpuOps ops;
  Tensor y({1, 2, 3, 4}, Layout::NHWC);
  ops.zero(ExecContext{pool, &tracer}, y);  // never started
  ops.zero(ExecContext{pool, nullptr}, y);  // tracing off
  EXPECT_EQ(tracer.record_count(), 0u);
  tracer.start();
  ops.zero(ExecContext{pool, &tracer}, y);
  tracer.stop();
  EXPECT_EQ(tracer.record_count(), 1u);
}

}  // namespace
}  // namespace tunescope::cpu::test_support
