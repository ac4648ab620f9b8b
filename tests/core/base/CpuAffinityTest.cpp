// Binding threads to CPUs (CpuAffinity.h): the allowed set as the OS gives it, a bound
// thread's affinity read back from the OS, the knob values' text, refusals.
#include "core/base/CpuAffinity.h"

#include <gtest/gtest.h>
#include <sched.h>

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/base/Error.h"

namespace tunescope {
namespace {

TEST(CpuAffinity, AllowedCpusAreTheProcessesAffinity) {
  cpu_set_t set;
  CPU_ZERO(&set);
  ASSERT_EQ(sched_getaffinity(0, sizeof set, &set), 0);
  const std::vector<int> cpus = allowed_cpus();
  ASSERT_EQ(cpus.size(), static_cast<size_t>(CPU_COUNT(&set)));
  EXPECT_TRUE(std::is_sorted(cpus.begin(), cpus.end()));
  for (int cpu : cpus) EXPECT_TRUE(CPU_ISSET(cpu, &set)) << cpu;
}

TEST(CpuAffinity, ABoundThreadReportsAndRunsOnItsCpuOnly) {
  const std::vector<int> cpus = allowed_cpus();
  const int target = cpus.back();  // not 0 where the process may use others
  int ran_on = -1;
  bool go = false;
  std::mutex mutex;
  std::condition_variable bound;
  std::thread thread([&] {
    std::unique_lock lock(mutex);
    bound.wait(lock, [&] { return go; });
    ran_on = sched_getcpu();  // after the binding: the kernel migrated it there
  });
  bind_thread_to_cpu(thread.native_handle(), target, "test thread");
  EXPECT_EQ(thread_cpus(thread.native_handle()), std::vector<int>{target});
  {
    std::lock_guard lock(mutex);
    go = true;
  }
  bound.notify_all();
  thread.join();
  EXPECT_EQ(ran_on, target);
}

TEST(CpuAffinity, ACpuOutsideTheSetIsRefusedNamingTheThread) {
  std::thread thread([] {});
  try {
    bind_thread_to_cpu(thread.native_handle(), CPU_SETSIZE + 5, "lane 3");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("lane 3"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("cpu_binding"), std::string::npos) << e.what();
  }
  thread.join();
}

TEST(CpuAffinity, CpuListsAndBindingValuesAsText) {
  EXPECT_EQ(cpu_list_text({0, 1, 2, 3, 6}), "0-3,6");
  EXPECT_EQ(cpu_list_text({1, 3, 4}), "1,3-4");
  EXPECT_EQ(cpu_list_text({}), "");
  for (CpuBinding b : {CpuBinding::off, CpuBinding::cores})
    EXPECT_EQ(parse_cpu_binding(to_string(b)), b);
  EXPECT_FALSE(parse_cpu_binding("core"));
  EXPECT_FALSE(parse_cpu_binding(""));
}

}  // namespace
}  // namespace tunescope
