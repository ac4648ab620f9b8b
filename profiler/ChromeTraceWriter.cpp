// Chrome trace-event JSON writer in tunescope's own layout; the output, atomic
// replacement and nesting tracks are shared with the other writers (TraceFileOutput).
#include "profiler/ChromeTraceWriter.h"

#include <climits>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "profiler/ChromeEventOutput.h"
#include "profiler/TraceFileOutput.h"

namespace tunescope::profiler {

namespace fs = std::filesystem;
using namespace chrome_trace;

namespace {

using trace_output::device_name;
using trace_output::tracks_per_lane;
using Output = trace_output::TextOutput;

class EventWriter {
 public:
  EventWriter(Output& out, const Trace& trace)
      : out_(out), trace_(trace), events_(out, trace_output::time_origin(trace)) {}

  void write() {
    out_.raw("{\"displayTimeUnit\":\"ns\",\n\"otherData\":");
    write_other_data(out_, kSchema, trace_.metadata, events_.origin_ns());
    out_.raw(",\n\"traceEvents\":[");
    write_records();
    write_names();
    out_.raw("\n]}\n");
  }

 private:
  void write_records() {
    const auto activity_tracks =
        tracks_per_lane(trace_.activities, [](const Activity& a) { return a.stream; });
    std::vector<int64_t> tids(trace_.activities.size());
    for (size_t i = 0; i < trace_.activities.size(); ++i) {
      const Activity& a = trace_.activities[i];
      const int pid = pid_of_device(a.device);
      const int64_t tid = tids[i] = activity_tid(a.stream, activity_tracks[i]);
      threads_[{pid, tid}] = {a.device, false, a.stream, activity_tracks[i]};
      events_.complete(a.name, to_string(a.kind), pid, tid, a.start_ns, a.end_ns)
          .raw(",\"args\":{\"device\":")
          .integer(a.device)
          .raw(",\"stream\":")
          .integer(a.stream);
      out_.raw(",\"correlation\":").integer(static_cast<int64_t>(a.correlation));
      if (a.range_id != 0) out_.raw(",\"range_id\":").integer(static_cast<int64_t>(a.range_id));
      out_.raw(",\"flops\":").number(a.flops).raw(",\"bytes\":").number(a.bytes).raw("}}");
    }
    // Launch -> kernel arrows, as in Kineto traces (the launch carries its range in args).
    for (const auto& [launch, kernel] : launch_kernel_pairs(trace_.activities)) {
      const Activity& from = trace_.activities[launch];
      const Activity& to = trace_.activities[kernel];
      events_.flow('s', to.correlation, pid_of_device(from.device), tids[launch], from.start_ns);
      events_.flow('f', to.correlation, pid_of_device(to.device), tids[kernel], to.start_ns);
    }
    events_.dependency_flows(trace_.flows, [](int device, int stream) {
      return std::pair<int64_t, int64_t>{pid_of_device(device), activity_tid(stream)};
    });
    const auto range_tracks = tracks_per_lane(trace_.ranges, [](const Range& r) { return r.lane; });
    for (size_t i = 0; i < trace_.ranges.size(); ++i) {
      const Range& r = trace_.ranges[i];
      const int pid = pid_of_device(r.device);
      const int64_t tid = range_tid(r.lane, range_tracks[i]);
      threads_[{pid, tid}] = {r.device, true, r.lane, range_tracks[i]};
      events_.complete(r.name, to_string(r.category), pid, tid, r.start_ns, r.end_ns)
          .raw(",\"args\":{\"device\":")
          .integer(r.device)
          .raw(",\"lane\":")
          .integer(r.lane);
      if (r.id != 0) out_.raw(",\"range_id\":").integer(static_cast<int64_t>(r.id));
      out_.raw("}}");
    }
  }

  // Process metadata carries no tid: a made-up one would become a thread of its own.
  void metadata_event(const char* what, int pid, std::optional<int64_t> tid, const char* arg_key) {
    events_.begin().raw("{\"ph\":\"M\",\"name\":\"").raw(what).raw("\",\"pid\":").integer(pid);
    if (tid) out_.raw(",\"tid\":").integer(*tid);
    out_.raw(",\"args\":{\"").raw(arg_key).raw("\":");
  }

  // Names devices and lanes; sort indices keep each lane's ranges right above its
  // activities, in lane order.
  void write_names() {
    const std::string lane_word = trace_.metadata.backend == "cuda" ? "stream " : "lane ";
    int last_pid = INT32_MIN;
    for (const auto& [key, thread] : threads_) {
      const auto& [pid, tid] = key;
      if (pid != last_pid) {
        metadata_event("process_name", pid, std::nullopt, "name");
        out_.string(device_name(trace_.metadata.backend, thread.device)).raw("}}");
        metadata_event("process_sort_index", pid, std::nullopt, "sort_index");
        out_.integer(pid).raw("}}");
        last_pid = pid;
      }
      std::string name = lane_word + std::to_string(thread.lane) + (thread.ranges ? " ranges" : "");
      if (thread.track > 0) name += " (" + std::to_string(thread.track + 1) + ")";
      metadata_event("thread_name", pid, tid, "name");
      out_.string(name).raw("}}");
      metadata_event("thread_sort_index", pid, tid, "sort_index");
      out_.integer(int64_t{thread.lane} * 1000 + (thread.ranges ? 0 : 500) + thread.track)
          .raw("}}");
    }
  }

  struct Thread {
    int device = 0;
    bool ranges = false;
    int lane = 0;
    int track = 0;
  };

  Output& out_;
  const Trace& trace_;
  EventList events_;
  std::map<std::pair<int, int64_t>, Thread> threads_;  // (pid, tid) used
};

}  // namespace

void ChromeTraceWriter::write(const Trace& trace, const fs::path& path) const {
  trace_output::write_atomically(path, [&](const fs::path& temp) {
    Output out(temp, path.extension() == ".gz");
    EventWriter(out, trace).write();
    out.close();
  });
}

}  // namespace tunescope::profiler
