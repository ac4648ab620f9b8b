// Kineto-layout Chrome trace writer: the field names and categories of PyTorch
// profiler traces, filled from our Trace.
#include "profiler/KinetoTraceWriter.h"

#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <unordered_map>

#include "profiler/ChromeEventOutput.h"
#include "profiler/TraceFileOutput.h"

namespace tunescope::profiler {

namespace fs = std::filesystem;
using Output = trace_output::TextOutput;

std::string kineto::category_of(ActivityKind kind) {
  switch (kind) {
    case ActivityKind::kernel: return "kernel";
    case ActivityKind::memcpy: return "gpu_memcpy";
    case ActivityKind::memset: return "gpu_memset";
    case ActivityKind::sync: return "cuda_sync";
    case ActivityKind::overhead: return "overhead";
  }
  return "kernel";
}

namespace {

// Kineto puts device d's activities in pid d; host-side (negative) devices get pids
// above the range process so they never collide with a device.
int64_t pid_of_device(int device) {
  return device >= 0 ? int64_t{device} : int64_t{kineto::kHostPid} - device;
}
int64_t rank_pid_base(int rank) { return int64_t{kineto::kRankPidStride} * rank; }
int64_t pid_of(int rank, int device) { return rank_pid_base(rank) + pid_of_device(device); }
int64_t host_pid(int rank) { return rank_pid_base(rank) + kineto::kHostPid; }

// distributedInfo's value from the metadata when it is a number, else `fallback`.
int64_t metadata_integer(const TraceMetadata& metadata, const char* key, int64_t fallback) {
  const auto it = metadata.extra.find(key);
  if (it == metadata.extra.end()) return fallback;
  try {
    size_t used = 0;
    const int64_t value = std::stoll(it->second, &used);
    return used == it->second.size() ? value : fallback;
  } catch (const std::logic_error&) {
    return fallback;
  }
}

class KinetoEventWriter {
 public:
  KinetoEventWriter(Output& out, const Trace& trace)
      : out_(out),
        trace_(trace),
        ranked_(has_ranks(trace)),
        events_(out, trace_output::time_origin(trace), ranked_) {}

  void write() {
    out_.raw("{\n\"schemaVersion\":").integer(kineto::kSchemaVersion);
    write_device_properties();
    // HTA reads the rank from here; a single-process run is rank 0 of 1, a rank's own
    // trace says its rank, a merged one the world size (and rank 0).
    out_.raw(",\n\"distributedInfo\":{\"rank\": ")
        .integer(metadata_integer(trace_.metadata, "rank", 0))
        .raw(", \"world_size\": ")
        .integer(metadata_integer(trace_.metadata, "world_size", 1))
        .raw("}");
    out_.raw(",\n\"displayTimeUnit\":\"ms\"");
    out_.raw(",\n\"baseTimeNanoseconds\":").integer(events_.origin_ns());
    // The same keys as ChromeTraceWriter's otherData, so one reader takes both.
    out_.raw(",\n\"otherData\":");
    chrome_trace::write_other_data(out_, "tunescope.kineto/1", trace_.metadata, std::nullopt);
    out_.raw(",\n\"traceEvents\":[");
    place_ranges();
    write_activities();
    write_ranges();
    write_names();
    out_.raw("\n]}\n");
  }

 private:
  // Kineto lists CUDA device properties; we know each device's id and name only.
  void write_device_properties() {
    std::set<int> devices;
    for (const Activity& a : trace_.activities)
      if (a.device >= 0) devices.insert(a.device);
    out_.raw(",\n\"deviceProperties\":[");
    bool first = true;
    for (int device : devices) {
      out_.raw(first ? "" : ",").raw("{\"id\":").integer(device).raw(",\"name\":");
      out_.string(trace_output::device_name(trace_.metadata.backend, device)).raw("}");
      first = false;
    }
    out_.raw("]");
  }

  void write_activities() {
    const auto tracks = trace_output::tracks_per_lane(trace_.activities,
                                                      [](const Activity& a) { return a.stream; });
    std::vector<std::pair<int64_t, int64_t>> places(trace_.activities.size());  // (pid, tid)
    for (size_t i = 0; i < trace_.activities.size(); ++i) {
      const Activity& a = trace_.activities[i];
      places[i] = place_of(a, tracks[i]);
      const auto [pid, tid] = places[i];
      if (pid != host_pid(a.rank))
        threads_[{pid, tid}] = Thread{a.rank, a.device, false, a.stream, tracks[i]};
      events_.complete(a.name, kineto::category_of(a.kind), pid, tid, a.start_ns, a.end_ns)
          .raw(",\"args\":{\"device\":")
          .integer(a.device)
          .raw(",\"stream\":")
          .integer(a.stream);
      if (ranked_) out_.raw(",\"rank\":").integer(a.rank);
      out_.raw(",\"correlation\":").integer(static_cast<int64_t>(a.correlation));
      if (a.range_id != 0) out_.raw(",\"range_id\":").integer(static_cast<int64_t>(a.range_id));
      out_.raw(",\"flops\":").number(a.flops).raw(",\"bytes\":").number(a.bytes).raw("}}");
    }
    for (const auto& [launch, kernel] : chrome_trace::launch_kernel_pairs(trace_.activities)) {
      const Activity& k = trace_.activities[kernel];
      const uint64_t id = events_.launch_flow_id(k);
      events_.flow('s', id, places[launch].first, places[launch].second,
                   trace_.activities[launch].start_ns);
      events_.flow('f', id, places[kernel].first, places[kernel].second, k.start_ns);
    }
    events_.dependency_flows(trace_.flows, [](const FlowEnd& end) {
      return std::pair<int64_t, int64_t>{pid_of(end.rank, end.device), end.stream};
    });
  }

  // Where an activity is drawn: its device's process and stream, except a host API call
  // made inside a traced range (range_id), which goes on that range's thread, as Kineto
  // puts cudaLaunchKernel inside the annotations of its CPU thread: the launch nests in
  // its layer and the launch -> kernel flow starts there.
  std::pair<int64_t, int64_t> place_of(const Activity& a, int track) const {
    if (a.device < 0 && a.range_id != 0) {
      const auto range = range_tid_of_id_.find({a.rank, a.range_id});
      if (range != range_tid_of_id_.end()) return {host_pid(a.rank), range->second};
    }
    return {pid_of(a.rank, a.device), int64_t{a.stream} + int64_t{kineto::kTrackStride} * track};
  }

  // Ranges of every device share the host process; devices get their own tid block.
  void place_ranges() {
    range_tracks_ =
        trace_output::tracks_per_lane(trace_.ranges, [](const Range& r) { return r.lane; });
    range_tids_.resize(trace_.ranges.size());
    for (size_t i = 0; i < trace_.ranges.size(); ++i) {
      const Range& r = trace_.ranges[i];
      range_tids_[i] = int64_t{r.lane} + 1 + int64_t{kineto::kTrackStride} * range_tracks_[i] +
                       int64_t{1000} * r.device;
      if (r.id != 0) range_tid_of_id_[{r.rank, r.id}] = range_tids_[i];
    }
  }

  void write_ranges() {
    for (size_t i = 0; i < trace_.ranges.size(); ++i) {
      const Range& r = trace_.ranges[i];
      const int64_t tid = range_tids_[i];
      threads_[{host_pid(r.rank), tid}] = Thread{r.rank, r.device, true, r.lane, range_tracks_[i]};
      events_.complete(r.name, "user_annotation", host_pid(r.rank), tid, r.start_ns, r.end_ns)
          .raw(",\"args\":{\"device\":")
          .integer(r.device)
          .raw(",\"lane\":")
          .integer(r.lane);
      if (ranked_) out_.raw(",\"rank\":").integer(r.rank);
      out_.raw(",\"category\":").string(to_string(r.category));
      if (r.id != 0) out_.raw(",\"range_id\":").integer(static_cast<int64_t>(r.id));
      out_.raw("}}");
    }
  }

  // Kineto's metadata events carry a ts; ours are placed at the origin.
  void metadata_event(const char* what, int64_t pid, int64_t tid, const char* arg_key) {
    events_.begin()
        .raw("{\"ph\":\"M\",\"name\":\"")
        .raw(what)
        .raw("\",\"ts\":0.000,\"pid\":")
        .integer(pid);
    out_.raw(",\"tid\":").integer(tid).raw(",\"args\":{\"").raw(arg_key).raw("\":");
  }

  void write_names() {
    const std::string lane_word = trace_.metadata.backend == "cuda" ? "stream " : "lane ";
    std::optional<int64_t> last_pid;
    for (const auto& [key, thread] : threads_) {
      const auto& [pid, tid] = key;
      if (pid != last_pid) {
        metadata_event("process_name", pid, 0, "name");
        const std::string name =
            pid == host_pid(thread.rank)
                ? std::string("host (ranges)")
                : trace_output::device_name(trace_.metadata.backend, thread.device);
        out_.string(ranked_ ? "rank " + std::to_string(thread.rank) + " · " + name : name)
            .raw("}}");
        metadata_event("process_sort_index", pid, 0, "sort_index");
        out_.integer(pid).raw("}}");
        last_pid = pid;
      }
      std::string name = lane_word + std::to_string(thread.lane);
      if (thread.ranges)
        name = (thread.device == 0 ? "" : "device " + std::to_string(thread.device) + " ") + name +
               " ranges";
      if (thread.track > 0) name += " (" + std::to_string(thread.track + 1) + ")";
      metadata_event("thread_name", pid, tid, "name");
      out_.string(name).raw("}}");
      metadata_event("thread_sort_index", pid, tid, "sort_index");
      out_.integer(tid).raw("}}");
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
  chrome_trace::EventList events_;
  std::map<std::pair<int64_t, int64_t>, Thread> threads_;  // (pid, tid) used
  std::vector<int> range_tracks_;
  std::vector<int64_t> range_tids_;
  std::map<std::pair<int, uint64_t>, int64_t> range_tid_of_id_;  // by (rank, range id)
};

}  // namespace

void KinetoTraceWriter::write(const Trace& trace, const fs::path& path) const {
  trace_output::write_atomically(path, [&](const fs::path& temp) {
    Output out(temp, path.extension() == ".gz");
    KinetoEventWriter(out, trace).write();
    out.close();
  });
}

}  // namespace tunescope::profiler
