// Hand-built CUPTI records -> Activities: kind, name, device, stream, correlation and
// host-clock times after normalisation; no GPU needed.
#ifdef HAS_CUPTI

#include "profiler/cupti/CuptiActivityConverter.h"

#include <gtest/gtest.h>

#include <cstring>

#include "FakeCuptiApi.h"

namespace tunescope::profiler::cupti {
namespace {

using test_support::kernel_record;
using test_support::memcpy_record;
using test_support::runtime_record;

// A record copied into raw bytes, as CUPTI hands them over: reading its kind through
// CUpti_Activity then does not alias an object of another declared type.
class RawRecord {
 public:
  template <typename Record>
  explicit RawRecord(const Record& record) {
    static_assert(sizeof(Record) <= sizeof(bytes_));
    std::memcpy(bytes_, &record, sizeof(Record));
  }
  const CUpti_Activity& get() const { return *reinterpret_cast<const CUpti_Activity*>(bytes_); }

 private:
  alignas(8) unsigned char bytes_[512];
};

template <typename Record>
bool convert(CuptiRecordConverter& converter, const Record& record, std::vector<Activity>& out) {
  const RawRecord raw(record);
  return converter.convert(raw.get(), out);
}

// GPU clock 1'000'000 ns ahead of the host clock.
constexpr GpuClockOffset kClock{-1'000'000};

TEST(CuptiClockOffset, MatchesTheGpuReadingToTheHostMidpoint) {
  const GpuClockOffset offset = clock_offset_from_samples(100, 5'000, 140);
  EXPECT_EQ(offset.gpu_to_host_ns, 120 - 5'000);
  EXPECT_EQ(offset.to_host(5'000), 120);
  EXPECT_EQ(offset.to_host(5'250), 370);
}

TEST(CuptiClockOffset, HandlesGpuClocksFarAheadOfTheHostClock) {
  // CUPTI's default clock counts from the Unix epoch (~1.7e18 ns), the host steady clock
  // from boot: the offset is large and negative and must not overflow.
  const uint64_t gpu = 1'700'000'000'000'000'000ull;
  const GpuClockOffset offset = clock_offset_from_samples(3'000'000'000, gpu, 3'000'000'100);
  EXPECT_EQ(offset.to_host(gpu + 1'000), 3'000'000'050 + 1'000);
}

TEST(CuptiActivityConverter, KernelRecordBecomesAKernelOnTheHostClock) {
  const auto record = kernel_record("_Z5scaleIfEvPfi", 2'000'500, 2'003'500, 1, 7, 42);
  const Activity a = kernel_activity(record, kClock);
  EXPECT_EQ(a.kind, ActivityKind::kernel);
  EXPECT_EQ(a.name, "void scale<float>(float*, int)");
  EXPECT_EQ(a.device, 1);
  EXPECT_EQ(a.stream, 7);
  EXPECT_EQ(a.correlation, 42u);
  EXPECT_EQ(a.start_ns, 1'000'500);
  EXPECT_EQ(a.end_ns, 1'003'500);
  EXPECT_EQ(a.duration_ns(), 3'000);
}

TEST(CuptiActivityConverter, MemcpyAndMemsetCarryDirectionAndBytes) {
  const Activity copy = memcpy_activity(
      memcpy_record(CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, 4096, 1'500'000, 1'600'000, 0, 3, 9), kClock);
  EXPECT_EQ(copy.kind, ActivityKind::memcpy);
  EXPECT_EQ(copy.name, "Memcpy HtoD");
  EXPECT_EQ(copy.bytes, 4096);
  EXPECT_EQ(copy.stream, 3);
  EXPECT_EQ(copy.correlation, 9u);
  EXPECT_EQ(copy.start_ns, 500'000);
  EXPECT_EQ(
      memcpy_activity(memcpy_record(CUPTI_ACTIVITY_MEMCPY_KIND_DTOD, 1, 1, 2, 0, 0, 0), kClock)
          .name,
      "Memcpy DtoD");

  CUpti_ActivityMemset4 set{};
  set.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  set.bytes = 256;
  set.start = 1'000'010;
  set.end = 1'000'020;
  set.deviceId = 2;
  set.streamId = 5;
  set.correlationId = 11;
  const Activity a = memset_activity(set, kClock);
  EXPECT_EQ(a.kind, ActivityKind::memset);
  EXPECT_EQ(a.name, "Memset");
  EXPECT_EQ(a.bytes, 256);
  EXPECT_EQ(a.device, 2);
  EXPECT_EQ(a.stream, 5);
  EXPECT_EQ(a.start_ns, 10);
  EXPECT_EQ(a.end_ns, 20);
}

TEST(CuptiRecordConverter, SynchronizationTakesItsDeviceFromTheContextRecord) {
  CuptiRecordConverter converter(kClock, nullptr);
  std::vector<Activity> out;
  CUpti_ActivityContext3 context{};
  context.kind = CUPTI_ACTIVITY_KIND_CONTEXT;
  context.contextId = 17;
  context.deviceId = 3;
  EXPECT_FALSE(convert(converter, context, out));

  CUpti_ActivitySynchronization2 sync{};
  sync.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
  sync.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
  sync.contextId = 17;
  sync.streamId = 4;
  sync.correlationId = 77;
  sync.start = 1'000'100;
  sync.end = 1'000'900;
  ASSERT_TRUE(convert(converter, sync, out));
  sync.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE;
  sync.streamId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
  sync.contextId = 99;  // never described: device 0
  ASSERT_TRUE(convert(converter, sync, out));

  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].kind, ActivityKind::sync);
  EXPECT_EQ(out[0].name, "Synchronize stream");
  EXPECT_EQ(out[0].device, 3);
  EXPECT_EQ(out[0].stream, 4);
  EXPECT_EQ(out[0].correlation, 77u);
  EXPECT_EQ(out[0].start_ns, 100);
  EXPECT_EQ(out[0].end_ns, 900);
  EXPECT_EQ(out[1].name, "Synchronize context");
  EXPECT_EQ(out[1].device, 0);
  EXPECT_EQ(out[1].stream, 0);
}

TEST(CuptiRecordConverter, EventRecordsAndStreamWaitsAreKeptForTheEventFlows) {
  CuptiRecordConverter converter(kClock, nullptr);
  std::vector<Activity> out;
  CUpti_ActivityContext3 context{};
  context.kind = CUPTI_ACTIVITY_KIND_CONTEXT;
  context.contextId = 17;
  context.deviceId = 2;
  EXPECT_FALSE(convert(converter, context, out));

  CUpti_ActivityCudaEvent2 record{};
  record.kind = CUPTI_ACTIVITY_KIND_CUDA_EVENT;
  record.eventId = 40;
  record.deviceId = 2;
  record.streamId = 7;
  record.correlationId = 12;
  EXPECT_FALSE(convert(converter, record, out));  // no activity of its own

  CUpti_ActivitySynchronization2 wait{};
  wait.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
  wait.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT;
  wait.contextId = 17;
  wait.streamId = 9;
  wait.cudaEventId = 40;
  wait.correlationId = 14;
  wait.start = 1'000'100;
  wait.end = 1'000'200;
  ASSERT_TRUE(convert(converter, wait, out));                          // still a sync activity
  wait.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;  // not a wait
  ASSERT_TRUE(convert(converter, wait, out));

  ASSERT_EQ(converter.event_records().size(), 1u);
  EXPECT_EQ(converter.event_records()[0].event, 40u);
  EXPECT_EQ(converter.event_records()[0].device, 2);
  EXPECT_EQ(converter.event_records()[0].stream, 7);
  EXPECT_EQ(converter.event_records()[0].correlation, 12u);
  ASSERT_EQ(converter.event_waits().size(), 1u);
  EXPECT_EQ(converter.event_waits()[0].device, 2);  // from the context record
  EXPECT_EQ(converter.event_waits()[0].stream, 9);
  EXPECT_EQ(converter.event_waits()[0].correlation, 14u);
  converter.clear_events();
  EXPECT_TRUE(converter.event_records().empty());
  EXPECT_TRUE(converter.event_waits().empty());
}

TEST(CuptiRecordConverter, RuntimeCallIsHostOverheadCorrelatedWithItsKernel) {
  int lookups = 0;
  CuptiRecordConverter converter(kClock, [&](CUpti_CallbackDomain domain, CUpti_CallbackId id) {
    ++lookups;
    EXPECT_EQ(domain, CUPTI_CB_DOMAIN_RUNTIME_API);
    return id == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000
               ? std::string("cudaLaunchKernel_v7000")
               : std::string();
  });
  std::vector<Activity> out;
  const auto launch = runtime_record(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 1'000'000,
                                     1'004'000, 4321, 42);
  const auto kernel = kernel_record("add_one", 1'010'000, 1'020'000, 0, 13, 42);
  ASSERT_TRUE(convert(converter, launch, out));
  ASSERT_TRUE(convert(converter, kernel, out));
  ASSERT_TRUE(convert(converter, launch, out));
  const auto unnamed = runtime_record(9999, 1'000'000, 1'000'001, 4321, 43);
  ASSERT_TRUE(convert(converter, unnamed, out));

  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0].kind, ActivityKind::overhead);
  EXPECT_EQ(out[0].name, "cudaLaunchKernel");
  EXPECT_EQ(out[0].device, -1);
  EXPECT_EQ(out[0].stream, 4321);
  EXPECT_EQ(out[0].start_ns, 0);
  EXPECT_EQ(out[0].end_ns, 4'000);
  EXPECT_EQ(out[0].correlation, out[1].correlation);
  EXPECT_EQ(out[1].name, "add_one");  // not mangled: unchanged
  EXPECT_EQ(out[3].name, "CUDA API 9999");
  EXPECT_EQ(lookups, 2) << "names are looked up once per callback id";
}

TEST(CuptiRecordConverter, OverheadLandsOnItsDeviceOrHostThread) {
  CUpti_ActivityOverhead3 overhead{};
  overhead.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
  overhead.overheadKind = CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH;
  overhead.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
  overhead.objectId.pt.threadId = 555;
  overhead.start = 1'000'001;
  overhead.end = 1'000'002;
  Activity a = overhead_activity(overhead, kClock);
  EXPECT_EQ(a.kind, ActivityKind::overhead);
  EXPECT_EQ(a.name, "CUPTI overhead: buffer flush");
  EXPECT_EQ(a.device, -1);
  EXPECT_EQ(a.stream, 555);
  EXPECT_EQ(a.start_ns, 1);

  overhead.objectKind = CUPTI_ACTIVITY_OBJECT_STREAM;
  overhead.objectId.dcs.deviceId = 2;
  overhead.objectId.dcs.streamId = 8;
  a = overhead_activity(overhead, kClock);
  EXPECT_EQ(a.device, 2);
  EXPECT_EQ(a.stream, 8);
}

TEST(CuptiRecordConverter, CountsRecordsWithoutTimesAndKindsItDoesNotTrace) {
  CuptiRecordConverter converter(kClock, nullptr);
  std::vector<Activity> out;
  const auto no_start = kernel_record("k", 0, 0, 0, 1, 1);
  const auto backwards = kernel_record("k", 2'000'000, 1'999'999, 0, 1, 1);
  CUpti_ActivityMarker2 marker{};
  marker.kind = CUPTI_ACTIVITY_KIND_MARKER;
  EXPECT_FALSE(convert(converter, no_start, out));
  EXPECT_FALSE(convert(converter, backwards, out));
  EXPECT_FALSE(convert(converter, marker, out));
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(converter.incomplete_records(), 2u);
  EXPECT_EQ(converter.ignored_records(), 1u);
}

TEST(CuptiNames, ApiVersionSuffixIsDroppedOnlyWhenNumeric) {
  EXPECT_EQ(api_display_name("cudaLaunchKernel_v7000"), "cudaLaunchKernel");
  EXPECT_EQ(api_display_name("cuLaunchKernel"), "cuLaunchKernel");
  EXPECT_EQ(api_display_name("cudaMalloc_v3020"), "cudaMalloc");
  EXPECT_EQ(api_display_name("my_very_thing"), "my_very_thing");
  EXPECT_EQ(api_display_name("ends_v"), "ends_v");
  EXPECT_EQ(demangle("plain_c_kernel"), "plain_c_kernel");
  EXPECT_EQ(demangle(nullptr), "<unnamed kernel>");
  EXPECT_EQ(synchronization_name(CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT),
            "Stream wait event");
}

}  // namespace
}  // namespace tunescope::profiler::cupti

#endif  // HAS_CUPTI
