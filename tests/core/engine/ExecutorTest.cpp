// Lanes and events: order within a lane, cross-lane dependencies, errors reaching the
// host without deadlock, a clean teardown with work still queued, and lanes bound to
// their devices.
#include "core/engine/Executor.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "core/base/Error.h"

namespace tunescope {
namespace {

using namespace std::chrono_literals;

TEST(Executor, LaneRunsItsTasksInOrderWithItsOwnPool) {
  Executor executor(2, 3, nullptr);
  std::vector<int> order;  // touched only by lane 1
  std::atomic<int> seen_lane{-1}, seen_pool{0};
  for (int i = 0; i < 50; ++i)
    executor.submit(1, [&, i](const ExecContext& exec) {
      if (i == 0) std::this_thread::sleep_for(5ms);  // a slow first task must not be overtaken
      order.push_back(i);
      seen_lane = exec.lane;
      seen_pool = exec.pool.size();
    });
  executor.synchronize();
  ASSERT_EQ(order.size(), 50u);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(order[static_cast<size_t>(i)], i);
  EXPECT_EQ(seen_lane, 1);
  EXPECT_EQ(seen_pool, 3);
}

TEST(Executor, WaitOrdersWorkAcrossLanesAndBindsToTheLatestRecord) {
  Executor executor(2, 1, nullptr);
  Event produced;
  std::atomic<int> value{0};
  std::atomic<int> read{-1};
  for (int round = 1; round <= 3; ++round) {
    executor.submit(0, [&, round](const ExecContext&) {
      std::this_thread::sleep_for(10ms);  // lane 1 would read too early without the wait
      value = round;
    });
    executor.record(0, produced);
    executor.wait(1, produced);
    executor.submit(1, [&, round](const ExecContext&) {
      read = value.load();
      EXPECT_EQ(read, round);
    });
  }
  executor.host_wait(produced);
  EXPECT_EQ(value, 3);
  executor.synchronize();
  EXPECT_EQ(read, 3);
}

TEST(Executor, ErrorOnALaneReachesTheHostAndReleasesWaiters) {
  Executor executor(2, 1, nullptr);
  Event never_reached_normally;
  std::atomic<bool> ran_after_failure{false};
  executor.submit(0, [](const ExecContext&) { throw std::runtime_error("kernel exploded"); });
  executor.submit(0, [&](const ExecContext&) { ran_after_failure = true; });
  executor.record(0, never_reached_normally);
  // Lane 1 waits for lane 0; once lane 0 fails the wait must not hang.
  executor.wait(1, never_reached_normally);
  executor.submit(1, [&](const ExecContext&) { ran_after_failure = true; });
  try {
    executor.synchronize();
    ADD_FAILURE() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "kernel exploded");
  }
  EXPECT_FALSE(ran_after_failure);
  // Usable again afterwards.
  std::atomic<int> runs{0};
  executor.submit(0, [&](const ExecContext&) { ++runs; });
  executor.record(0, never_reached_normally);
  executor.wait(1, never_reached_normally);
  executor.submit(1, [&](const ExecContext&) { ++runs; });
  executor.synchronize();
  EXPECT_EQ(runs, 2);
}

TEST(Executor, HostWaitRethrowsAFailureOnAnyLane) {
  Executor executor(2, 1, nullptr);
  Event done;
  executor.submit(1, [](const ExecContext&) { throw std::runtime_error("update failed"); });
  executor.submit(0, [](const ExecContext&) { std::this_thread::sleep_for(5ms); });
  executor.record(0, done);
  EXPECT_THROW(
      {
        executor.host_wait(done);
        executor.synchronize();  // in case lane 0 finished first
      },
      std::runtime_error);
}

TEST(Executor, DestructionWithQueuedAndBlockedWorkIsClean) {
  std::atomic<int> runs{0};
  {
    Executor executor(3, 2, nullptr);
    Event late;
    for (int i = 0; i < 20; ++i)
      executor.submit(0, [&](const ExecContext&) {
        std::this_thread::sleep_for(2ms);
        ++runs;
      });
    executor.record(0, late);
    executor.wait(1, late);  // blocked behind lane 0's queue when the executor goes
    executor.submit(1, [&](const ExecContext&) { ++runs; });
    std::this_thread::sleep_for(5ms);
  }  // must neither hang nor crash
  EXPECT_LT(runs, 21);
}

// A backend that records which device each lane thread was bound to, and fails to bind
// to device 7.
class DeviceRecordingBackend final : public Backend {
 public:
  std::string name() const override { return "recording"; }
  std::string device_description() const override { return "recording"; }
  OpKernels& ops() override { throw std::logic_error("no ops"); }
  void bind_thread(int device) override {
    if (device == 7) throw Error(ErrorKind::runtime, "cannot bind to device 7");
    std::lock_guard lock(mutex);
    bound.push_back(device);
  }
  NativeStream lane_stream(int lane, int) override {
    return NativeStream(&streams.at(static_cast<size_t>(lane)));
  }
  std::mutex mutex;
  std::vector<int> bound;
  std::array<int, 4> streams{};
};

TEST(Executor, LanesAreBoundToTheirDevicesAndTellTheirTasks) {
  DeviceRecordingBackend backend;
  std::vector<int> seen(3, -1);
  {
    Executor executor(3, 1, nullptr, &backend, {0, 1, 1});
    for (int lane = 0; lane < 3; ++lane)
      executor.submit(lane, [&seen](const ExecContext& exec) {
        seen[static_cast<size_t>(exec.lane)] = exec.device;
      });
    executor.synchronize();
  }
  EXPECT_EQ(seen, (std::vector<int>{0, 1, 1}));
  std::sort(backend.bound.begin(), backend.bound.end());
  EXPECT_EQ(backend.bound, (std::vector<int>{0, 1, 1}));
  EXPECT_THROW(Executor(2, 1, nullptr, &backend, {0}), Error);  // one device for two lanes
}

// The update on the host's lane: it runs beside the device lanes but is neither bound
// nor given a stream, since its kernels are host ops.
TEST(Executor, HostLanesAreNeitherBoundNorGivenAStream) {
  DeviceRecordingBackend backend;
  std::vector<NativeStream> streams(3);
  {
    Executor executor(3, 1, nullptr, &backend, {1, 1, 1}, 1);
    for (int lane = 0; lane < 3; ++lane)
      executor.submit(lane, [&streams](const ExecContext& exec) {
        streams[static_cast<size_t>(exec.lane)] = exec.stream;
      });
    executor.synchronize();
  }
  EXPECT_EQ(streams,
            (std::vector<NativeStream>{NativeStream(&backend.streams[0]),
                                       NativeStream(&backend.streams[1]), NativeStream()}));
  EXPECT_EQ(backend.bound, (std::vector<int>{1, 1}));
  EXPECT_THROW(Executor(2, 1, nullptr, &backend, {0, 0}, 3), Error);  // more host lanes than lanes
}

TEST(Executor, ALaneThatCannotBindFailsTheRunInsteadOfTheProcess) {
  DeviceRecordingBackend backend;
  Executor executor(2, 1, nullptr, &backend, {0, 7});
  bool ran = false;
  executor.submit(1, [&ran](const ExecContext&) { ran = true; });
  try {
    executor.synchronize();
    ADD_FAILURE() << "the bind failure did not reach the host";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("device 7"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(ran);
}

}  // namespace
}  // namespace tunescope
