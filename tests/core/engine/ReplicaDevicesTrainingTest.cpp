// The engine on a backend with two "devices" (tests/core/SeparateMemory.h spaces, CPU
// ops underneath): replica r is built and trained in device r's memory, its lanes are
// bound to device r and traced on it, batches come from the backend's staging memory,
// and training matches the plain cpu backend. This is what the cuda backend relies on
// to run one replica per GPU, checked here without one.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <mutex>
#include <set>

#include "core/base/Registry.h"
#include "core/engine/RunKnobs.h"
#include "core/engine/TrainingSession.h"
#include "tests/core/SeparateMemory.h"

namespace tunescope {
namespace {

std::array<test_support::SeparateMemory, 2>& device_memories() {
  static std::array<test_support::SeparateMemory, 2> memories;
  return memories;
}

// Host memory that counts its allocations: the staging memory batches must come from.
class CountingHostMemory final : public MemorySpace {
 public:
  std::string name() const override { return "counted host"; }
  bool host_accessible() const override { return true; }
  void* allocate(size_t bytes) override {
    ++allocations;
    return host_memory().allocate(bytes);
  }
  void deallocate(void* p, size_t bytes) noexcept override { host_memory().deallocate(p, bytes); }
  void zero(void* p, size_t bytes) override { host_memory().zero(p, bytes); }
  void copy_within(void* dst, const void* src, size_t bytes) override {
    host_memory().copy_within(dst, src, bytes);
  }
  void copy_from_host(void* dst, const void* src, size_t bytes) override {
    host_memory().copy_from_host(dst, src, bytes);
  }
  void copy_to_host(void* dst, const void* src, size_t bytes) override {
    host_memory().copy_to_host(dst, src, bytes);
  }
  std::atomic<int> allocations{0};
};

CountingHostMemory& staging() {
  static CountingHostMemory memory;
  return memory;
}

std::mutex g_bound_mutex;
std::set<int> g_bound;  // devices lane threads were bound to
thread_local int t_device = -1;

class TwoDeviceBackend final : public Backend {
 public:
  std::string name() const override { return "two-devices"; }
  std::string device_description() const override { return "CPU ops on two separate memories"; }
  OpKernels& ops() override { return cpu_->ops(); }
  MemorySpace& memory() override { return device_memories()[0]; }
  MemorySpace& device_memory(int device) override {
    return device_memories().at(static_cast<size_t>(device));
  }
  MemorySpace& staging_memory() override { return staging(); }
  std::vector<int> replica_devices(int replicas) override {
    std::vector<int> devices;
    for (int r = 0; r < replicas; ++r) devices.push_back(r % 2);
    return devices;
  }
  NativeStream lane_stream(int lane, int device) override {
    EXPECT_EQ(device, t_device) << "lane " << lane << " asks for a stream before being bound";
    return NativeStream(&streams_.at(static_cast<size_t>(lane)));
  }
  void bind_thread(int device) override {
    t_device = device;
    std::lock_guard lock(g_bound_mutex);
    g_bound.insert(device);
  }

 private:
  std::unique_ptr<Backend> cpu_ = Registry::instance().make_backend("cpu");
  std::array<int, 16> streams_{};
};

const BackendRegistration two_devices_backend("two-devices", "direct",
                                              [] { return std::make_unique<TwoDeviceBackend>(); });
const ConvAlgorithmRegistration two_devices_direct(
    "two-devices", "direct", [](const KnobValues& options) {
      return Registry::instance().make_conv_algorithm("cpu", "direct", options);
    });

SessionOptions two_devices_options(const std::string& backend_name) {
  SessionOptions options;
  options.backend = backend_name;
  options.data = "fake";
  options.fake_train_count = 64;
  options.fake_test_count = 12;
  options.batch = 8;
  knobs::threads.set(options.knobs, 2);
  options.conv = parse_conv_choice("direct");
  knobs::streams.set(options.knobs, 2);
  knobs::replicas.set(options.knobs, 2);
  return options;
}

TEST(ReplicaDevicesTraining, EachReplicaLivesRunsAndIsTracedOnItsDevice) {
  TrainingSession cpu(two_devices_options("cpu"));
  const int staged_before = staging().allocations;
  TrainingSession split(two_devices_options("two-devices"));
  // Replica 0's parameters are in device 0's memory; the trainer's replica 1 is not
  // exposed, but device 1's memory must have received its network and buffers.
  for (const Parameter* p : split.network().parameters())
    EXPECT_EQ(&p->value.memory(), &device_memories()[0]) << p->name;
  EXPECT_GT(device_memories()[1].allocations, 0);
  EXPECT_GT(device_memories()[1].copies_in, 0);  // replica 1's weights initialised on the host

  split.tracer().start();
  const EpochResult want = cpu.train_steps(3);
  const EpochResult got = split.train_steps(3);
  split.tracer().stop();
  EXPECT_GT(staging().allocations, staged_before);  // batches assembled in the staging memory
  {
    std::lock_guard lock(g_bound_mutex);
    EXPECT_EQ(g_bound, (std::set<int>{0, 1}));
  }
  // Lanes 0,1 are replica 0's (device 0), lanes 2,3 replica 1's (device 1).
  const profiler::Trace trace = split.tracer().collect({});
  std::set<std::pair<int, int>> lanes_of_device;
  for (const auto& a : trace.activities) lanes_of_device.insert({a.device, a.stream});
  for (const auto& [device, lane] : lanes_of_device) EXPECT_EQ(device, lane / 2) << "lane " << lane;
  EXPECT_TRUE(lanes_of_device.count({1, 2})) << "replica 1's forward is traced on device 1";

  EXPECT_NEAR(got.stats.mean_loss(), want.stats.mean_loss(),
              1e-5 * std::abs(want.stats.mean_loss()));
  const auto want_params = cpu.network().parameters();
  const auto got_params = split.network().parameters();
  ASSERT_EQ(want_params.size(), got_params.size());
  for (size_t i = 0; i < want_params.size(); ++i) {
    const Tensor host = to_host(got_params[i]->value);
    const Tensor& ref = want_params[i]->value;
    double scale = 0, error = 0;
    for (int64_t k = 0; k < ref.size(); ++k) {
      scale = std::max(scale, static_cast<double>(std::abs(ref.data()[k])));
      error = std::max(error, static_cast<double>(std::abs(host.data()[k] - ref.data()[k])));
    }
    // Same kernels in the same order as on cpu: float rounding only (1e-5 relative).
    EXPECT_LE(error, 1e-5 * scale) << want_params[i]->name;
  }
}

// The update on the host with one replica per device: the reduction into device 0, the
// download, the host SGD, the upload to device 0 and the broadcast to device 1. Replica
// 1's gradients in steps 2 and 3 come from the weights broadcast to it, so replica 0's
// weights after 3 steps match the device update only if device 1 got them. Same kernels
// in the same order: 1e-6 of each tensor's largest |weight|.
TEST(ReplicaDevicesTraining, UpdateOnTheHostReachesEveryDevice) {
  SessionOptions options = two_devices_options("two-devices");
  knobs::async_update.set(options.knobs, true);
  TrainingSession on_device(options);
  knobs::update_on.set(options.knobs, UpdateOn::host);
  TrainingSession on_host(options);
  on_device.train_steps(3);
  on_host.train_steps(3);
  const auto want_params = on_device.network().parameters();
  const auto got_params = on_host.network().parameters();
  ASSERT_EQ(want_params.size(), got_params.size());
  for (size_t i = 0; i < want_params.size(); ++i) {
    const Tensor got = to_host(got_params[i]->value), want = to_host(want_params[i]->value);
    double scale = 0, error = 0;
    for (int64_t k = 0; k < want.size(); ++k) {
      scale = std::max(scale, static_cast<double>(std::abs(want.data()[k])));
      error = std::max(error, static_cast<double>(std::abs(got.data()[k] - want.data()[k])));
    }
    EXPECT_LE(error, 1e-6 * scale) << want_params[i]->name;
  }
}

}  // namespace
}  // namespace tunescope
