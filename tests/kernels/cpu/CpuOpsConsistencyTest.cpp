// Every CPU op gives the same logical results in NCHW and NHWC, and bit-identical
// results on a pool of 1 and of 3 threads (reductions use shape-fixed partitions) and
// with its tensors in a memory space the host may not read (the op cases place and
// fetch tensors only through the space's copies, as the CUDA comparison needs).
#include <gtest/gtest.h>

#include "CpuOpsCases.h"
#include "CpuOpsTestSupport.h"
#include "core/base/ThreadPool.h"
#include "kernels/cpu/CpuOps.h"
#include "tests/core/SeparateMemory.h"

namespace tunescope::cpu::test_support {
namespace {

TEST(CpuOpsConsistency, NchwAndNhwcGiveTheSameLogicalResults) {
  ThreadPool pool(2);
  const ExecContext ctx{pool};
  CpuOps ops;
  for (const OpCase& c : op_cases()) {
    SCOPED_TRACE(c.name);
    const auto nchw = c.run(ops, ctx, Layout::NCHW, host_memory());
    const auto nhwc = c.run(ops, ctx, Layout::NHWC, host_memory());
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
      const auto a = c.run(ops, serial, layout, host_memory());
      const auto b = c.run(ops, parallel, layout, host_memory());
      ASSERT_EQ(a.size(), b.size());
      for (size_t i = 0; i < a.size(); ++i)
        EXPECT_TRUE(bitwise_equal(a[i], b[i])) << "output " << i;
    }
}

TEST(CpuOpsConsistency, SeparateMemoryGivesTheSameBitsAsHostMemory) {
  ThreadPool pool(2);
  const ExecContext ctx{pool};
  CpuOps ops;
  tunescope::test_support::SeparateMemory separate;
  std::vector<OpCase> cases = op_cases();
  for (OpCase& c : collective_cases()) cases.push_back(std::move(c));
  for (const OpCase& c : cases) {
    // The CPU transpose is convert_layout, which rightly refuses memory the host may not
    // read; the backends with such memory bring their own transpose.
    if (c.name == "transpose") continue;
    for (Layout layout : {Layout::NCHW, Layout::NHWC}) {
      SCOPED_TRACE(c.name + " " + to_string(layout));
      const int copies_before = separate.copies_in;
      const auto host = c.run(ops, ctx, layout, host_memory());
      const auto placed = c.run(ops, ctx, layout, separate);
      EXPECT_GT(separate.copies_in, copies_before);  // the inputs went through the space's copies
      ASSERT_EQ(host.size(), placed.size());
      for (size_t i = 0; i < host.size(); ++i) {
        EXPECT_TRUE(placed[i].on_host()) << "output " << i;
        EXPECT_TRUE(bitwise_equal(placed[i], host[i])) << "output " << i;
      }
    }
  }
}

}  // namespace
}  // namespace tunescope::cpu::test_support
