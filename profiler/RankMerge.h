// One trace of all ranks: each MPI rank records its own trace (its rank, the world size
// and its clock's measured offset from rank 0 in TraceMetadata::extra); the merge puts
// them on rank 0's clock, each record tagged with its rank, and keeps every offset and
// its uncertainty in the merged metadata. Used by `tunescope merge-traces` and by rank 0
// at the end of an MPI run.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "profiler/ChromeTraceReader.h"
#include "profiler/Trace.h"

namespace tunescope::profiler {

// TraceMetadata::extra keys of a rank's own trace.
inline constexpr const char* kRankKey = "rank";
inline constexpr const char* kWorldSizeKey = "world_size";
// This rank's clock minus rank 0's, in ns, as measured (ping-pong), and the measurement's
// uncertainty (half the round trip). Absent: not measured (the merge takes 0).
inline constexpr const char* kClockOffsetKey = "clock_offset_ns";
inline constexpr const char* kClockUncertaintyKey = "clock_offset_uncertainty_ns";
// Keys the merge adds: the ranks it merged ("0,1"), those of the world it lacked, and
// per rank "rank<r>.<key>" for the offset, its uncertainty and the input's name.
inline constexpr const char* kMergedRanksKey = "merged_ranks";
inline constexpr const char* kMissingRanksKey = "missing_ranks";
inline constexpr const char* kRankSourceKey = "source";

// A problem with one input (or a pair of them); what() names the input(s).
class RankMergeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct RankInput {
  std::string source;  // what errors call it: the file name, or "rank 3" in memory
  Trace trace;
};

// Merges per-rank traces into one, ordered by rank. Each record gets its input's rank
// and moves by minus that rank's clock offset (onto rank 0's clock). Correlation and
// range ids are renumbered so that they stay unique across ranks (each rank's ids move
// above the previous ranks'). Metadata: rank 0's (lowest rank's) machine, backend and
// config, its extra without the per-rank keys, then world_size, merged_ranks,
// missing_ranks (when some rank of the world is absent) and rank<r>.clock_offset_ns /
// .clock_offset_uncertainty_ns / .source (and .machine where it differs from rank 0's).
// Throws RankMergeError naming the input: no inputs, no or a non-integer rank or
// world_size, a rank outside the world, a rank twice, world sizes that differ, a bad
// clock offset, an input that is itself a merged trace (or holds records tagged with a
// rank other than 0 and its own).
Trace merge_rank_traces(std::vector<RankInput> inputs);

// Reads each file (read_trace_file: errors name the file) and merges them.
Trace merge_rank_trace_files(const std::vector<std::filesystem::path>& paths,
                             const TraceReadOptions& options = {});

// Where rank r writes its own trace: ".rank<r>" before the extension ("t.json" ->
// "t.rank1.json", "t.json.gz" -> "t.rank1.json.gz", "t" -> "t.rank1").
std::filesystem::path rank_trace_path(const std::filesystem::path& trace_path, int rank);

// A merged trace's clock alignment, from its metadata (empty for a trace of one process).
struct RankClock {
  int rank = 0;
  std::optional<int64_t> offset_ns;       // unset: not measured
  std::optional<int64_t> uncertainty_ns;  // unset: not measured
  std::string source;
};
std::vector<RankClock> rank_clocks(const TraceMetadata& metadata);

// "rank<r>.<key>": a per-rank key of a merged trace's metadata.
std::string rank_key(int rank, const std::string& key);

// One rank's records of a merged trace (activities, ranges and the flows with both ends
// on that rank), still on rank 0's clock, with the merged metadata: what an analysis of
// one process reads. Lanes of different ranks share (device, stream) numbers, so a
// per-process analysis must not see two ranks at once.
Trace rank_part(const Trace& merged, int rank);

}  // namespace tunescope::profiler
