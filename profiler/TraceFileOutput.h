// What every trace file writer shares: buffered (optionally gzip) text output, the
// write-to-temp-then-rename step that never leaves a half file behind, the nesting
// tracks that keep complete events drawable, and the names of devices.
#pragma once

#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "profiler/Trace.h"

namespace tunescope::profiler::trace_output {

// Buffered output through a gzFile; plain files go through the same code because
// zlib's "T" mode writes them uncompressed. Throws std::runtime_error with the bare
// reason (the caller adds the path).
class TextOutput {
 public:
  TextOutput(const std::filesystem::path& path, bool gzip);
  ~TextOutput();
  TextOutput(const TextOutput&) = delete;
  TextOutput& operator=(const TextOutput&) = delete;

  TextOutput& raw(std::string_view text);
  // A JSON string literal: plain ASCII directly, anything else escaped by nlohmann,
  // which also replaces invalid UTF-8 so that the file stays parseable.
  TextOutput& string(std::string_view text);
  TextOutput& integer(int64_t value);
  // Microseconds with exactly three decimals, from integer nanoseconds: no rounding.
  TextOutput& microseconds(int64_t ns);
  // Shortest text that reads back to the same double; JSON has no NaN or infinity, so
  // those are written as 0.
  TextOutput& number(double value);
  void close();

 private:
  void flush();
  gzFile file_ = nullptr;
  std::string buffer_;
};

// Runs `write_to(temp)` on a temporary path next to `path`, then renames it into
// place; on any failure removes the temporary file and throws std::runtime_error
// "<path>: cannot write trace: <reason>".
void write_atomically(const std::filesystem::path& path,
                      const std::function<void(const std::filesystem::path&)>& write_to);

// Viewers draw complete events on one tid as a stack, so records there must nest or be
// disjoint. Given intervals sorted by start (longer first at equal start), returns for
// each the lowest track on which it nests; a partial overlap opens a new track.
std::vector<int> nesting_tracks(const std::vector<std::pair<int64_t, int64_t>>& sorted);

// For each record of `records`, its nesting track within its (rank, device, lane) group.
template <typename Record, typename LaneOf>
std::vector<int> tracks_per_lane(const std::vector<Record>& records, LaneOf lane_of) {
  std::map<std::tuple<int, int, int>, std::vector<size_t>> by_lane;
  for (size_t i = 0; i < records.size(); ++i)
    by_lane[{records[i].rank, records[i].device, lane_of(records[i])}].push_back(i);

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

// "CPU", "GPU 1", "host"...: what a device of `backend` is called in viewers.
std::string device_name(const std::string& backend, int device);

// Earliest start over activities and ranges (0 for an empty trace): the origin that
// keeps microsecond doubles exact to the nanosecond.
int64_t time_origin(const Trace& trace);

}  // namespace tunescope::profiler::trace_output
