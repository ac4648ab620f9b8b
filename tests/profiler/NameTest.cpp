// Interned record names: equal texts share one copy, names compare and order as their
// texts, and interning from several threads at once agrees.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "profiler/Name.h"
#include "profiler/Trace.h"

namespace tunescope::profiler {
namespace {

TEST(NameTest, EqualTextsShareOneCopy) {
  const std::string built = std::string("gemm.") + "fwd";
  const Name a("gemm.fwd"), b(built), c(std::string_view("gemm.bwd_data"));
  EXPECT_EQ(&a.str(), &b.str());
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_EQ(a, "gemm.fwd");
  EXPECT_EQ(a, built);
  EXPECT_EQ(c.size(), 13u);
  EXPECT_STREQ(c.c_str(), "gemm.bwd_data");
}

TEST(NameTest, DefaultIsEmptyAndEqualToAnEmptyText) {
  const Name none, empty("");
  EXPECT_TRUE(none.empty());
  EXPECT_EQ(none, empty);
  EXPECT_EQ(none.str(), "");
}

TEST(NameTest, OrdersAndPrintsAsItsText) {
  EXPECT_LT(Name("alpha"), Name("beta"));
  EXPECT_GT(Name("relu.fwd"), Name("bn.fwd"));
  EXPECT_EQ(Name("x") <=> Name("x"), std::strong_ordering::equal);
  std::ostringstream out;
  out << Name("fft-own.bwd_filter");
  EXPECT_EQ(out.str(), "fft-own.bwd_filter");
}

TEST(NameTest, InterningFromSeveralThreadsGivesOneCopyPerText) {
  // Each thread interns the same 200 texts in its own order.
  constexpr int kThreads = 4, kTexts = 200;
  std::vector<std::vector<const std::string*>> seen(kThreads,
                                                    std::vector<const std::string*>(kTexts));
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int k = 0; k < kTexts; ++k) {
        const int i = (k * 7 + t * 13) % kTexts;
        seen[t][i] = &Name("thread-name-" + std::to_string(i)).str();
      }
    });
  for (std::thread& thread : threads) thread.join();
  for (int t = 1; t < kThreads; ++t) EXPECT_EQ(seen[t], seen[0]);
  for (int i = 0; i < kTexts; ++i) EXPECT_EQ(*seen[0][i], "thread-name-" + std::to_string(i));
}

TEST(NameTest, RecordsStaySmall) {
  // The layout a 10M-event trace is sized by (docs/BENCHMARKS.md): a pointer per name.
  EXPECT_EQ(sizeof(Name), sizeof(void*));
  EXPECT_LE(sizeof(Activity), 72u);
  EXPECT_LE(sizeof(Range), 48u);
}

}  // namespace
}  // namespace tunescope::profiler
