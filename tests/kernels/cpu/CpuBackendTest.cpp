// The "cpu" backend is registered, describes the machine and serves working op kernels.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <thread>

#include "core/base/Registry.h"
#include "core/base/ThreadPool.h"

namespace tunescope::cpu::test_support {
namespace {

TEST(CpuBackend, IsRegisteredUnderItsName) {
  const auto names = Registry::instance().backends();
  EXPECT_NE(std::find(names.begin(), names.end(), "cpu"), names.end());
  const auto backend = Registry::instance().make_backend("cpu");
  ASSERT_NE(backend, nullptr);
  EXPECT_EQ(backend->name(), "cpu");
}

TEST(CpuBackend, DescriptionNamesCoresAndLibraries) {
  const std::string description = Registry::instance().make_backend("cpu")->device_description();
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  EXPECT_NE(description.find(std::to_string(cores) + " logical cores"), std::string::npos)
      << description;
  EXPECT_NE(description.find("OpenBLAS"), std::string::npos) << description;
  EXPECT_NE(description.find("fftw-3"), std::string::npos) << description;
}

// The engine reaches kernels only through the backend: its ops must be usable as is.
TEST(CpuBackend, OpsRunThroughTheInterface) {
  const auto backend = Registry::instance().make_backend("cpu");
  ThreadPool pool(2);
  Tensor a({1, 2, 2, 2}, Layout::NHWC), b({1, 2, 2, 2}, Layout::NHWC),
      y({1, 2, 2, 2}, Layout::NHWC);
  a.fill(1.5f);
  b.fill(2.0f);
  backend->ops().add(ExecContext{pool}, a, b, y);
  for (int64_t i = 0; i < y.size(); ++i) EXPECT_EQ(y.data()[i], 3.5f);
}

}  // namespace
}  // namespace tunescope::cpu::test_support
