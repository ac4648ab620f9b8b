// Chrome trace-event JSON writer: streams the events through zlib (gzip or
// transparent) into a temp file next to the target, then renames it into place.
#include "profiler/ChromeTraceWriter.h"

#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace tunescope::profiler {

namespace fs = std::filesystem;
using namespace chrome_trace;

namespace {

// Buffered output through a gzFile; the same code writes plain files because zlib's
// "T" mode writes them uncompressed. Throws std::runtime_error with the bare reason.
class Output {
 public:
  Output(const fs::path& path, bool gzip) {
    errno = 0;
    file_ = gzopen(path.c_str(), gzip ? "wb6" : "wbT");
    if (!file_) throw std::runtime_error(errno ? std::strerror(errno) : "cannot open for writing");
    gzbuffer(file_, 1 << 17);
    buffer_.reserve(kFlushBytes + 4096);
  }
  ~Output() {
    if (file_) gzclose(file_);
  }
  Output(const Output&) = delete;
  Output& operator=(const Output&) = delete;

  Output& raw(std::string_view text) {
    buffer_.append(text);
    if (buffer_.size() >= kFlushBytes) flush();
    return *this;
  }

  Output& string(std::string_view text) {
    // Names are almost always plain ASCII: write them directly; anything else (quotes,
    // control characters, non-ASCII) goes through nlohmann, which escapes it and
    // replaces invalid UTF-8 so that the file stays parseable.
    const bool plain = std::all_of(text.begin(), text.end(), [](char c) {
      return c >= 0x20 && c < 0x7f && c != '"' && c != '\\';
    });
    if (plain) return raw("\"").raw(text).raw("\"");
    return raw(nlohmann::json(std::string(text))
                   .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  }

  Output& integer(int64_t value) {
    char text[24];
    const auto end = std::to_chars(text, text + sizeof text, value).ptr;
    return raw(std::string_view(text, static_cast<size_t>(end - text)));
  }

  // Microseconds with exactly three decimals, from integers: no rounding on the way.
  Output& microseconds(int64_t ns) {
    if (ns < 0) {
      raw("-");
      ns = -ns;
    }
    char fraction[4] = {static_cast<char>('0' + ns / 100 % 10),
                        static_cast<char>('0' + ns / 10 % 10), static_cast<char>('0' + ns % 10), 0};
    return integer(ns / 1000).raw(".").raw(fraction);
  }

  // Shortest text that reads back to the same double; JSON has no NaN or infinity.
  Output& number(double value) {
    if (!std::isfinite(value)) return raw("0");
    char text[32];
    const auto end = std::to_chars(text, text + sizeof text, value).ptr;
    return raw(std::string_view(text, static_cast<size_t>(end - text)));
  }

  void close() {
    flush();
    const int status = gzclose(std::exchange(file_, nullptr));
    if (status != Z_OK)
      throw std::runtime_error(status == Z_ERRNO ? std::strerror(errno) : "zlib error on close");
  }

 private:
  static constexpr size_t kFlushBytes = 1 << 20;

  void flush() {
    if (buffer_.empty()) return;
    if (gzwrite(file_, buffer_.data(), static_cast<unsigned>(buffer_.size())) == 0) {
      int code = Z_OK;
      const char* message = gzerror(file_, &code);
      throw std::runtime_error(code == Z_ERRNO ? std::strerror(errno) : message);
    }
    buffer_.clear();
  }

  gzFile file_ = nullptr;
  std::string buffer_;
};

// Viewers draw complete events on one tid as a stack, so records there must nest or be
// disjoint. Given intervals sorted by start (longer first at equal start), returns
// for each the lowest track on which it nests; a partial overlap opens a new track.
std::vector<int> nesting_tracks(const std::vector<std::pair<int64_t, int64_t>>& sorted) {
  std::vector<std::vector<int64_t>> open_ends;  // per track: ends of enclosing records
  std::vector<int> tracks;
  tracks.reserve(sorted.size());
  for (const auto& [start, end] : sorted) {
    size_t track = 0;
    for (; track < open_ends.size(); ++track) {
      auto& ends = open_ends[track];
      while (!ends.empty() && ends.back() <= start) ends.pop_back();
      if (ends.empty() || end <= ends.back()) break;
    }
    if (track == open_ends.size()) open_ends.emplace_back();
    open_ends[track].push_back(end);
    tracks.push_back(static_cast<int>(track));
  }
  return tracks;
}

// For each record of `records`, the track within its (device, lane) group.
template <typename Record, typename LaneOf>
std::vector<int> tracks_per_lane(const std::vector<Record>& records, LaneOf lane_of) {
  std::map<std::pair<int, int>, std::vector<size_t>> by_lane;
  for (size_t i = 0; i < records.size(); ++i)
    by_lane[{records[i].device, lane_of(records[i])}].push_back(i);

  std::vector<int> tracks(records.size(), 0);
  for (auto& [lane, indices] : by_lane) {
    std::stable_sort(indices.begin(), indices.end(), [&](size_t a, size_t b) {
      const Record& x = records[a];
      const Record& y = records[b];
      return x.start_ns < y.start_ns || (x.start_ns == y.start_ns && x.end_ns > y.end_ns);
    });
    std::vector<std::pair<int64_t, int64_t>> intervals;
    intervals.reserve(indices.size());
    for (size_t i : indices)
      intervals.emplace_back(records[i].start_ns, std::max(records[i].end_ns, records[i].start_ns));
    const std::vector<int> lane_tracks = nesting_tracks(intervals);
    for (size_t k = 0; k < indices.size(); ++k) tracks[indices[k]] = lane_tracks[k];
  }
  return tracks;
}

std::string device_name(const std::string& backend, int device) {
  if (device < 0) return "host";
  if (backend == "cpu") return device == 0 ? "CPU" : "CPU " + std::to_string(device);
  if (backend == "cuda") return "GPU " + std::to_string(device);
  return "device " + std::to_string(device);
}

class EventWriter {
 public:
  EventWriter(Output& out, const Trace& trace) : out_(out), trace_(trace) {}

  void write() {
    origin_ = time_origin();
    out_.raw("{\"displayTimeUnit\":\"ns\",\n\"otherData\":");
    write_other_data();
    out_.raw(",\n\"traceEvents\":[");
    write_records();
    write_names();
    out_.raw("\n]}\n");
  }

 private:
  int64_t time_origin() const {
    int64_t origin = INT64_MAX;
    for (const Activity& a : trace_.activities) origin = std::min(origin, a.start_ns);
    for (const Range& r : trace_.ranges) origin = std::min(origin, r.start_ns);
    return origin == INT64_MAX ? 0 : origin;
  }

  void write_other_data() {
    const TraceMetadata& m = trace_.metadata;
    out_.raw("{").string(kSchemaKey).raw(":").string(kSchema);
    out_.raw(",").string(kMachineKey).raw(":").string(m.machine);
    out_.raw(",").string(kBackendKey).raw(":").string(m.backend);
    out_.raw(",").string(kConfigKey).raw(":").string(m.config);
    out_.raw(",").string(kTimeOriginKey).raw(":").integer(origin_);
    out_.raw(",").string(kExtraKey).raw(":{");
    bool first = true;
    for (const auto& [key, value] : m.extra) {
      out_.raw(first ? "" : ",").string(key).raw(":").string(value);
      first = false;
    }
    out_.raw("}}");
  }

  void begin_event() {
    out_.raw(first_event_ ? "\n" : ",\n");
    first_event_ = false;
  }

  void complete_event(const std::string& name, const std::string& category, int pid, int64_t tid,
                      int64_t start_ns, int64_t end_ns) {
    begin_event();
    out_.raw("{\"ph\":\"X\",\"name\":").string(name).raw(",\"cat\":").string(category);
    out_.raw(",\"pid\":").integer(pid).raw(",\"tid\":").integer(tid);
    out_.raw(",\"ts\":").microseconds(start_ns - origin_);
    out_.raw(",\"dur\":").microseconds(std::max<int64_t>(end_ns - start_ns, 0));
  }

  void write_records() {
    const auto activity_tracks =
        tracks_per_lane(trace_.activities, [](const Activity& a) { return a.stream; });
    for (size_t i = 0; i < trace_.activities.size(); ++i) {
      const Activity& a = trace_.activities[i];
      const int pid = pid_of_device(a.device);
      const int64_t tid = activity_tid(a.stream, activity_tracks[i]);
      threads_[{pid, tid}] = {a.device, false, a.stream, activity_tracks[i]};
      complete_event(a.name, to_string(a.kind), pid, tid, a.start_ns, a.end_ns);
      out_.raw(",\"args\":{\"device\":").integer(a.device).raw(",\"stream\":").integer(a.stream);
      out_.raw(",\"correlation\":").integer(static_cast<int64_t>(a.correlation));
      out_.raw(",\"flops\":").number(a.flops).raw(",\"bytes\":").number(a.bytes).raw("}}");
    }
    const auto range_tracks = tracks_per_lane(trace_.ranges, [](const Range& r) { return r.lane; });
    for (size_t i = 0; i < trace_.ranges.size(); ++i) {
      const Range& r = trace_.ranges[i];
      const int pid = pid_of_device(r.device);
      const int64_t tid = range_tid(r.lane, range_tracks[i]);
      threads_[{pid, tid}] = {r.device, true, r.lane, range_tracks[i]};
      complete_event(r.name, to_string(r.category), pid, tid, r.start_ns, r.end_ns);
      out_.raw(",\"args\":{\"device\":")
          .integer(r.device)
          .raw(",\"lane\":")
          .integer(r.lane)
          .raw("}}");
    }
  }

  // Process metadata carries no tid: a made-up one would become a thread of its own.
  void metadata_event(const char* what, int pid, std::optional<int64_t> tid, const char* arg_key) {
    begin_event();
    out_.raw("{\"ph\":\"M\",\"name\":\"").raw(what).raw("\",\"pid\":").integer(pid);
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
  int64_t origin_ = 0;
  bool first_event_ = true;
  std::map<std::pair<int, int64_t>, Thread> threads_;  // (pid, tid) used
};

// Unique among concurrent writers in this process and across processes.
fs::path temp_path_next_to(const fs::path& path) {
  static std::atomic<unsigned> counter{0};
  std::string name = ".";
  name.append(path.filename().string()).append(".tmp-").append(std::to_string(::getpid()));
  name.append("-").append(std::to_string(counter.fetch_add(1)));
  return path.parent_path() / name;
}

}  // namespace

void ChromeTraceWriter::write(const Trace& trace, const fs::path& path) const {
  const fs::path temp = temp_path_next_to(path);
  try {
    Output out(temp, path.extension() == ".gz");
    EventWriter(out, trace).write();
    out.close();
    fs::rename(temp, path);
  } catch (const std::exception& e) {
    std::error_code ignored;
    fs::remove(temp, ignored);
    // filesystem_error's what() already names both paths; give only its reason.
    const auto* fs_error = dynamic_cast<const fs::filesystem_error*>(&e);
    throw std::runtime_error(path.string() + ": cannot write trace: " +
                             (fs_error ? fs_error->code().message() : std::string(e.what())));
  }
}

}  // namespace tunescope::profiler
