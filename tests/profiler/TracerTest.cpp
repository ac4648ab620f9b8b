// Tests of the CPU tracer: concurrent recording, start/stop, interning, isolation
// between tracers, and collect() clearing.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "profiler/Tracer.h"

namespace tunescope::profiler {
namespace {

bool sorted_by_start(const Trace& trace) {
  return std::is_sorted(
             trace.activities.begin(), trace.activities.end(),
             [](const Activity& a, const Activity& b) { return a.start_ns < b.start_ns; }) &&
         std::is_sorted(trace.ranges.begin(), trace.ranges.end(),
                        [](const Range& a, const Range& b) { return a.start_ns < b.start_ns; });
}

TEST(TracerTest, RecordsFromConcurrentThreadsAllArriveSortedOnTheirLanes) {
  Tracer tracer;
  tracer.start();
  constexpr int kThreads = 4;
  constexpr int kPerThread = 10'000;  // spans several chunks per thread
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&tracer, t] {
      const char* name = tracer.intern("kernel-" + std::to_string(t));
      for (int i = 0; i < kPerThread; ++i) {
        // Interleaved start times across threads, so the merge must really sort.
        const int64_t start = int64_t{i} * kThreads + t;
        tracer.record_activity(ActivityKind::kernel, name, /*device=*/t % 2, /*stream=*/t, start,
                               start + 2, /*flops=*/i, /*bytes=*/t);
      }
      tracer.record_range("step", RangeCategory::iteration, 0, t, 0, kPerThread * kThreads);
    });
  }
  // record_count() may be read while threads record (it is how overhead is watched):
  // it must never exceed what was recorded and never go back.
  size_t seen = 0;
  for (int poll = 0; poll < 100; ++poll) {
    const size_t now = tracer.record_count();
    EXPECT_GE(now, seen);
    EXPECT_LE(now, size_t{kThreads * (kPerThread + 1)});
    seen = now;
  }
  for (auto& thread : threads) thread.join();
  tracer.stop();
  EXPECT_EQ(tracer.record_count(), size_t{kThreads * (kPerThread + 1)});

  const Trace trace = tracer.collect({});
  ASSERT_EQ(trace.activities.size(), size_t{kThreads * kPerThread});
  ASSERT_EQ(trace.ranges.size(), size_t{kThreads});
  EXPECT_TRUE(sorted_by_start(trace));

  std::map<int, int> per_lane;
  for (size_t i = 0; i < trace.activities.size(); ++i) {
    const Activity& a = trace.activities[i];
    EXPECT_EQ(a.start_ns, static_cast<int64_t>(i));  // every start present exactly once
    const int t = a.stream;
    EXPECT_EQ(a.name, "kernel-" + std::to_string(t));
    EXPECT_EQ(a.device, t % 2);
    EXPECT_EQ(a.duration_ns(), 2);
    EXPECT_EQ(a.flops, static_cast<double>((a.start_ns - t) / kThreads));
    EXPECT_EQ(a.bytes, static_cast<double>(t));
    ++per_lane[t];
  }
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(per_lane[t], kPerThread);
  std::set<int> range_lanes;
  for (const Range& r : trace.ranges) {
    EXPECT_EQ(r.name, "step");
    EXPECT_EQ(r.category, RangeCategory::iteration);
    range_lanes.insert(r.lane);
  }
  EXPECT_EQ(range_lanes.size(), size_t{kThreads});
}

TEST(TracerTest, RecordsOnlyWhileStarted) {
  Tracer tracer;
  EXPECT_FALSE(tracer.recording());
  tracer.record_activity(ActivityKind::kernel, "before", 0, 0, 1, 2);
  { KernelScope scope(&tracer, "before-scope", 0, 0); }

  tracer.start();
  EXPECT_TRUE(tracer.recording());
  tracer.record_activity(ActivityKind::kernel, "during", 0, 0, 3, 4);
  tracer.stop();

  tracer.record_activity(ActivityKind::kernel, "after", 0, 0, 5, 6);
  tracer.record_range("after", RangeCategory::run, 0, 0, 5, 6);
  { KernelScope scope(&tracer, "after-scope", 0, 0); }
  EXPECT_EQ(tracer.record_count(), 1u);

  const Trace trace = tracer.collect({});
  ASSERT_EQ(trace.activities.size(), 1u);
  EXPECT_EQ(trace.activities[0].name, "during");
  EXPECT_TRUE(trace.ranges.empty());
}

TEST(TracerTest, ScopeOpenWhenStoppedIsDropped) {
  Tracer tracer;
  tracer.start();
  {
    KernelScope scope(&tracer, "straddles-stop", 0, 0);
    tracer.stop();
  }
  EXPECT_EQ(tracer.record_count(), 0u);
}

TEST(TracerTest, ScopesRecordKindTimesAndWork) {
  Tracer tracer;
  tracer.start();
  const int64_t before = now_ns();
  {
    RangeScope iteration(&tracer, "iteration 0", RangeCategory::iteration, 1, 2);
    KernelScope kernel(&tracer, "copy", 1, 2, /*flops=*/0, /*bytes=*/4096, ActivityKind::memcpy);
  }
  const int64_t after = now_ns();
  KernelScope null_tracer(nullptr, "nothing", 0, 0);  // must not crash or record
  tracer.stop();

  const Trace trace = tracer.collect({});
  ASSERT_EQ(trace.activities.size(), 1u);
  ASSERT_EQ(trace.ranges.size(), 1u);
  const Activity& a = trace.activities[0];
  EXPECT_EQ(a.kind, ActivityKind::memcpy);
  EXPECT_EQ(a.device, 1);
  EXPECT_EQ(a.stream, 2);
  EXPECT_EQ(a.bytes, 4096);
  EXPECT_LE(before, a.start_ns);
  EXPECT_LE(a.start_ns, a.end_ns);
  EXPECT_LE(a.end_ns, after);
  const Range& r = trace.ranges[0];
  EXPECT_EQ(r.name, "iteration 0");
  EXPECT_EQ(r.device, 1);
  EXPECT_EQ(r.lane, 2);
  // The range encloses the kernel it was opened around.
  EXPECT_LE(r.start_ns, a.start_ns);
  EXPECT_GE(r.end_ns, a.end_ns);
}

TEST(TracerTest, InternReturnsOneStablePointerPerName) {
  Tracer tracer;
  std::string built = "conv";
  built += "1";
  const char* first = tracer.intern(built);
  built = "changed";  // the tracer must own its copy
  EXPECT_STREQ(first, "conv1");
  EXPECT_EQ(tracer.intern("conv1"), first);
  EXPECT_NE(tracer.intern("conv2"), first);

  // Many more names must not move the first one (no reallocation of storage).
  std::vector<const char*> pointers;
  for (int i = 0; i < 5000; ++i) pointers.push_back(tracer.intern("layer-" + std::to_string(i)));
  EXPECT_STREQ(first, "conv1");
  EXPECT_EQ(tracer.intern("conv1"), first);
  for (int i = 0; i < 5000; i += 499) {
    EXPECT_STREQ(pointers[i], ("layer-" + std::to_string(i)).c_str());
    EXPECT_EQ(tracer.intern("layer-" + std::to_string(i)), pointers[i]);
  }
}

TEST(TracerTest, InternedNamesCanBeRecordedAfterLaterInterning) {
  Tracer tracer;
  tracer.start();
  const char* name = tracer.intern("early");
  for (int i = 0; i < 1000; ++i) tracer.intern("filler-" + std::to_string(i));
  tracer.record_activity(ActivityKind::kernel, name, 0, 0, 0, 1);
  tracer.stop();
  EXPECT_EQ(tracer.collect({}).activities.at(0).name, "early");
}

TEST(TracerTest, TwoTracersOnOneThreadAreIndependent) {
  Tracer a, b;
  a.start();
  b.start();
  for (int i = 0; i < 3; ++i) a.record_activity(ActivityKind::kernel, "a", 0, 0, i, i + 1);
  for (int i = 0; i < 5; ++i) b.record_activity(ActivityKind::kernel, "b", 0, 1, i, i + 1);
  a.stop();
  b.stop();
  EXPECT_EQ(a.record_count(), 3u);
  EXPECT_EQ(b.record_count(), 5u);
  for (const Activity& x : a.collect({}).activities) EXPECT_EQ(x.name, "a");
  const Trace tb = b.collect({});
  EXPECT_EQ(tb.activities.size(), 5u);
  for (const Activity& x : tb.activities) EXPECT_EQ(x.name, "b");
}

TEST(TracerTest, NewTracerAfterDestructionStartsEmpty) {
  // A thread's cached buffer for a destroyed tracer must never be used for a new one,
  // even if the allocator hands the new tracer the same address.
  for (int round = 0; round < 3; ++round) {
    auto tracer = std::make_unique<Tracer>();
    tracer->start();
    tracer->record_activity(ActivityKind::kernel, "k", 0, 0, 0, 1);
    EXPECT_EQ(tracer->record_count(), 1u);
    tracer->stop();
    EXPECT_EQ(tracer->collect({}).activities.size(), 1u);
  }
}

TEST(TracerTest, ThreadAlternatingAmongManyTracersKeepsOneBufferEach) {
  // More tracers than a thread caches: evicted tracers must be found again, and their
  // records must all arrive.
  constexpr int kTracers = 20, kRounds = 50;
  std::vector<std::unique_ptr<Tracer>> tracers;
  for (int i = 0; i < kTracers; ++i) {
    tracers.push_back(std::make_unique<Tracer>());
    tracers.back()->start();
  }
  for (int round = 0; round < kRounds; ++round)
    for (int i = 0; i < kTracers; ++i)
      tracers[i]->record_activity(ActivityKind::kernel, "k", 0, i, round, round + 1);
  for (int i = 0; i < kTracers; ++i) {
    tracers[i]->stop();
    const Trace trace = tracers[i]->collect({});
    ASSERT_EQ(trace.activities.size(), size_t{kRounds});
    for (int round = 0; round < kRounds; ++round) {
      EXPECT_EQ(trace.activities[round].start_ns, round);
      EXPECT_EQ(trace.activities[round].stream, i);
    }
  }
}

TEST(TracerTest, CollectClearsAndKeepsMetadata) {
  Tracer tracer;
  tracer.start();
  for (int i = 0; i < 5000; ++i)
    tracer.record_activity(ActivityKind::kernel, "first", 0, 0, i, i + 1);
  tracer.stop();
  TraceMetadata metadata;
  metadata.machine = "test machine";
  metadata.backend = "cpu";
  metadata.extra["run"] = "1";
  const Trace first = tracer.collect(metadata);
  EXPECT_EQ(first.activities.size(), 5000u);
  EXPECT_EQ(first.metadata.machine, "test machine");
  EXPECT_EQ(first.metadata.backend, "cpu");
  EXPECT_EQ(first.metadata.extra.at("run"), "1");

  EXPECT_EQ(tracer.record_count(), 0u);
  EXPECT_TRUE(tracer.collect({}).activities.empty());

  // The second run reuses the first run's chunks and grows past them: only its own
  // records may come out.
  for (int run = 0; run < 2; ++run) {
    const int count = run == 0 ? 3 : 9000;
    tracer.start();
    for (int i = 0; i < count; ++i)
      tracer.record_activity(ActivityKind::kernel, "second", 0, 0, i, i + 1);
    tracer.stop();
    const Trace second = tracer.collect({});
    ASSERT_EQ(second.activities.size(), size_t(count));
    for (int i = 0; i < count; ++i) {
      ASSERT_EQ(second.activities[i].name, "second");
      ASSERT_EQ(second.activities[i].start_ns, i);
    }
  }
}

TEST(TracerTest, RecordsOfExitedThreadsSurviveUntilCollect) {
  Tracer tracer;
  tracer.start();
  for (int round = 0; round < 3; ++round) {
    std::thread([&] {
      tracer.record_activity(ActivityKind::kernel, "short-lived", 0, round, round, round + 1);
    }).join();
  }
  tracer.stop();
  const Trace trace = tracer.collect({});
  ASSERT_EQ(trace.activities.size(), 3u);
  for (int round = 0; round < 3; ++round) EXPECT_EQ(trace.activities[round].stream, round);
}

TEST(TracerTest, EnclosingRecordsSortBeforeWhatTheyEnclose) {
  Tracer tracer;
  tracer.start();
  tracer.record_range("layer", RangeCategory::layer, 0, 0, 10, 20);
  tracer.record_range("iteration", RangeCategory::iteration, 0, 0, 10, 50);
  tracer.stop();
  const Trace trace = tracer.collect({});
  ASSERT_EQ(trace.ranges.size(), 2u);
  EXPECT_EQ(trace.ranges[0].name, "iteration");
  EXPECT_EQ(trace.ranges[1].name, "layer");
}

}  // namespace
}  // namespace tunescope::profiler
