// Every CPU op gives the same logical results in NCHW and NHWC, and bit-identical
// results on a pool of 1 and of 3 threads (reductions use shape-fixed partitions).
#include <gtest/gtest.h>

#include "CpuOpsCases.h"
#include "CpuOpsTestSupport.h"
#include "core/base/ThreadPool.h"
#include "kernels/cpu/CpuOps.h"

namespace tunescope::cpu::testing {
namespace {

TEST(CpuOpsConsistency, NchwAndNhwcGiveTheSameLogicalResults) {
  ThreadPool pool(2);
  const ExecContext ctx{pool};
  CpuOps ops;
  for (const OpCase& c : op_cases()) {
    SCOPED_TRACE(c.name);
    const auto nchw = c.run(ops, ctx, Layout::NCHW);
    const auto nhwc = c.run(ops, ctx, Layout::NHWC);
    ASSERT_EQ(nchw.size(), nhwc.size());
    for (size_t i = 0; i < nchw.size(); ++i)
      EXPECT_TRUE(logically_near(nhwc[i], nchw[i], c.layout_tolerance)) << "output " << i;
  }
}

TEST(CpuOpsConsistency, OneAndThreeThreadsGiveIdenticalBits) {
  ThreadPool one(1), three(3);
  const ExecContext serial{one}, parallel{three};
  CpuOps ops;
  for (const OpCase& c : op_cases())
    for (Layout layout : {Layout::NCHW, Layout::NHWC}) {
      SCOPED_TRACE(c.name + " " + to_string(layout));
      const auto a = c.run(ops, serial, layout);
      const auto b = c.run(ops, parallel, layout);
      ASSERT_EQ(a.size(), b.size());
      for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(bitwise_equal(a[i], b[i])) << "output " << i;
    }
}

}  // namespace
}  // namespace tunescope::cpu::testing
