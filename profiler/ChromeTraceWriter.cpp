// Chrome trace-event JSON writer in tunescope's own layout; the output, atomic
// replacement and nesting tracks are shared with the other writers (TraceFileOutput).
#include "profiler/ChromeTraceWriter.h"

#include <algorithm>
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
      : out_(out),
        trace_(trace),
        ranked_(has_ranks(trace)),
        events_(out, trace_output::time_origin(trace), ranked_) {}

  void write() {
    out_.raw("{\"displayTimeUnit\":\"ns\",\n\"otherData\":");
    write_other_data(out_, kSchema, trace_.metadata, events_.origin_ns());
    out_.raw(",\n\"traceEvents\":[");
    write_records();
    write_names();
    out_.raw("\n]}\n");
  }

 private:
  // A process per device, or per rank in a ranked trace (devices then in tid blocks).
  int pid_of(int rank, int device) const {
    return ranked_ ? pid_of_rank(rank) : pid_of_device(device);
  }
  int64_t tid_base(int device) const { return ranked_ ? device_tid_base(device) : 0; }

  void rank_arg(int rank) {
    if (ranked_) out_.raw(",\"rank\":").integer(rank);
  }

  void write_records() {
    const auto activity_tracks =
        tracks_per_lane(trace_.activities, [](const Activity& a) { return a.stream; });
    std::vector<int64_t> tids(trace_.activities.size());
    for (size_t i = 0; i < trace_.activities.size(); ++i) {
      const Activity& a = trace_.activities[i];
      const int pid = pid_of(a.rank, a.device);
      const int64_t tid = tids[i] = tid_base(a.device) + activity_tid(a.stream, activity_tracks[i]);
      threads_[{pid, tid}] = {a.rank, a.device, false, a.stream, activity_tracks[i]};
      events_.complete(a.name, to_string(a.kind), pid, tid, a.start_ns, a.end_ns)
          .raw(",\"args\":{\"device\":")
          .integer(a.device)
          .raw(",\"stream\":")
          .integer(a.stream);
      rank_arg(a.rank);
      out_.raw(",\"correlation\":").integer(static_cast<int64_t>(a.correlation));
      if (a.range_id != 0) out_.raw(",\"range_id\":").integer(static_cast<int64_t>(a.range_id));
      out_.raw(",\"flops\":").number(a.flops).raw(",\"bytes\":").number(a.bytes).raw("}}");
    }
    // Launch -> kernel arrows, as in Kineto traces (the launch carries its range in args).
    for (const auto& [launch, kernel] : launch_kernel_pairs(trace_.activities)) {
      const Activity& from = trace_.activities[launch];
      const Activity& to = trace_.activities[kernel];
      const uint64_t id = events_.launch_flow_id(to);
      events_.flow('s', id, pid_of(from.rank, from.device), tids[launch], from.start_ns);
      events_.flow('f', id, pid_of(to.rank, to.device), tids[kernel], to.start_ns);
    }
    events_.dependency_flows(trace_.flows, [this](const FlowEnd& end) {
      return std::pair<int64_t, int64_t>{pid_of(end.rank, end.device),
                                         tid_base(end.device) + activity_tid(end.stream)};
    });
    const auto range_tracks = tracks_per_lane(trace_.ranges, [](const Range& r) { return r.lane; });
    for (size_t i = 0; i < trace_.ranges.size(); ++i) {
      const Range& r = trace_.ranges[i];
      const int pid = pid_of(r.rank, r.device);
      const int64_t tid = tid_base(r.device) + range_tid(r.lane, range_tracks[i]);
      threads_[{pid, tid}] = {r.rank, r.device, true, r.lane, range_tracks[i]};
      events_.complete(r.name, to_string(r.category), pid, tid, r.start_ns, r.end_ns)
          .raw(",\"args\":{\"device\":")
          .integer(r.device)
          .raw(",\"lane\":")
          .integer(r.lane);
      rank_arg(r.rank);
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

  // Names processes (devices, or ranks) and lanes; sort indices keep each lane's ranges
  // right above its activities, in lane order (in a ranked trace: by device, then lane).
  void write_names() {
    const std::string lane_word = trace_.metadata.backend == "cuda" ? "stream " : "lane ";
    int last_pid = INT32_MIN;
    for (const auto& [key, thread] : threads_) {
      const auto& [pid, tid] = key;
      const std::string device = device_name(trace_.metadata.backend, thread.device);
      if (pid != last_pid) {
        metadata_event("process_name", pid, std::nullopt, "name");
        out_.string(ranked_ ? "rank " + std::to_string(thread.rank) : device).raw("}}");
        metadata_event("process_sort_index", pid, std::nullopt, "sort_index");
        out_.integer(pid).raw("}}");
        last_pid = pid;
      }
      std::string name = lane_word + std::to_string(thread.lane) + (thread.ranges ? " ranges" : "");
      if (ranked_) name = device + " " + name;
      if (thread.track > 0) name += " (" + std::to_string(thread.track + 1) + ")";
      metadata_event("thread_name", pid, tid, "name");
      out_.string(name).raw("}}");
      metadata_event("thread_sort_index", pid, tid, "sort_index");
      const int64_t device_order =
          ranked_ ? int64_t{10'000'000} * (std::clamp(thread.device, -1, 97) + 2) : 0;
      out_.integer(device_order + int64_t{thread.lane} * 1000 + (thread.ranges ? 0 : 500) +
                   thread.track)
          .raw("}}");
    }
  }

  struct Thread {
    int rank = 0;
    int device = 0;
    bool ranges = false;
    int lane = 0;
    int track = 0;
  };

  Output& out_;
  const Trace& trace_;
  const bool ranked_;
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
