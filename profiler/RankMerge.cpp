#include "profiler/RankMerge.h"

#include <algorithm>
#include <map>
#include <sstream>

#include "profiler/TraceFiles.h"

namespace tunescope::profiler {

namespace fs = std::filesystem;

namespace {

std::optional<int64_t> integer_value(const TraceMetadata& metadata, const std::string& key,
                                     const std::string& source) {
  const auto it = metadata.extra.find(key);
  if (it == metadata.extra.end()) return std::nullopt;
  try {
    size_t used = 0;
    const int64_t value = std::stoll(it->second, &used);
    if (used == it->second.size()) return value;
  } catch (const std::logic_error&) {
  }
  throw RankMergeError(source + ": metadata " + key + " '" + it->second + "' is not an integer");
}

int64_t required_integer(const TraceMetadata& metadata, const std::string& key,
                         const std::string& source) {
  const std::optional<int64_t> value = integer_value(metadata, key, source);
  if (!value)
    throw RankMergeError(source + ": no '" + key +
                         "' in the trace metadata: not the trace of one rank of an MPI run");
  return *value;
}

// What one input says about itself, checked.
struct RankInfo {
  int rank = 0;
  int64_t world_size = 0;
  std::optional<int64_t> offset_ns;
  std::optional<int64_t> uncertainty_ns;
};

RankInfo rank_info(const RankInput& input) {
  const TraceMetadata& m = input.trace.metadata;
  RankInfo info;
  if (m.extra.count(kMergedRanksKey))
    throw RankMergeError(input.source + ": already a merged trace of several ranks");
  info.world_size = required_integer(m, kWorldSizeKey, input.source);
  if (info.world_size < 1 || info.world_size > (int64_t{1} << 20))
    throw RankMergeError(input.source + ": world_size " + std::to_string(info.world_size) +
                         " is out of range (1 to 1048576)");
  const int64_t rank = required_integer(m, kRankKey, input.source);
  if (rank < 0 || rank >= info.world_size)
    throw RankMergeError(input.source + ": rank " + std::to_string(rank) +
                         " is outside its world (world_size " + std::to_string(info.world_size) +
                         ")");
  info.rank = static_cast<int>(rank);
  // A rank's records are its own: rank 0 (a tracer that does not know its rank) or its
  // rank; any other is a merged trace whose metadata was lost.
  const auto foreign = [&](int record_rank) {
    return record_rank != 0 && record_rank != info.rank;
  };
  if (std::any_of(input.trace.activities.begin(), input.trace.activities.end(),
                  [&](const Activity& a) { return foreign(a.rank); }) ||
      std::any_of(input.trace.ranges.begin(), input.trace.ranges.end(),
                  [&](const Range& r) { return foreign(r.rank); }))
    throw RankMergeError(input.source + ": holds records of another rank than its rank " +
                         std::to_string(rank) + ": already a merged trace of several ranks");
  info.offset_ns = integer_value(m, kClockOffsetKey, input.source);
  info.uncertainty_ns = integer_value(m, kClockUncertaintyKey, input.source);
  if (info.uncertainty_ns && *info.uncertainty_ns < 0)
    throw RankMergeError(input.source + ": " + kClockUncertaintyKey + " is negative");
  return info;
}

template <typename Ids>
uint64_t max_id(const Ids& ids) {
  uint64_t top = 0;
  for (uint64_t id : ids) top = std::max(top, id);
  return top;
}

// GCC 12 at -O3 warns -Wrestrict inside libstdc++'s operator+(const char*, string&&)
// inlined here: a false positive (GCC bug 105329, fixed in GCC 13).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wrestrict"
#endif
std::string join(const std::vector<int>& values) {
  std::string text;
  for (int v : values) text += (text.empty() ? "" : ",") + std::to_string(v);
  return text;
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

}  // namespace

std::string rank_key(int rank, const std::string& key) {
  return "rank" + std::to_string(rank) + "." + key;
}

Trace rank_part(const Trace& merged, int rank) {
  Trace part;
  part.metadata = merged.metadata;
  for (const Activity& a : merged.activities)
    if (a.rank == rank) part.activities.push_back(a);
  for (const Range& r : merged.ranges)
    if (r.rank == rank) part.ranges.push_back(r);
  for (const Flow& f : merged.flows)
    if (f.from.rank == rank && f.to.rank == rank) part.flows.push_back(f);
  return part;
}

Trace merge_rank_traces(std::vector<RankInput> inputs) {
  if (inputs.empty()) throw RankMergeError("no rank traces to merge");
  std::vector<RankInfo> infos;
  std::map<int, size_t> input_of_rank;
  for (size_t i = 0; i < inputs.size(); ++i) {
    infos.push_back(rank_info(inputs[i]));
    const RankInfo& info = infos.back();
    if (info.world_size != infos.front().world_size)
      throw RankMergeError(inputs[i].source + ": world_size " + std::to_string(info.world_size) +
                           ", but " + inputs.front().source + " has world_size " +
                           std::to_string(infos.front().world_size) +
                           ": the traces come from different runs");
    const auto [it, added] = input_of_rank.emplace(info.rank, i);
    if (!added)
      throw RankMergeError(inputs[i].source + ": rank " + std::to_string(info.rank) +
                           " again (also " + inputs[it->second].source + ")");
  }

  Trace merged;
  const RankInput& first = inputs[input_of_rank.begin()->second];
  merged.metadata = first.trace.metadata;
  for (const char* key : {kRankKey, kClockOffsetKey, kClockUncertaintyKey})
    merged.metadata.extra.erase(key);
  merged.metadata.extra[kWorldSizeKey] = std::to_string(infos.front().world_size);

  std::vector<int> ranks, missing;
  uint64_t correlation_base = 0, range_base = 0;
  for (const auto& [rank, index] : input_of_rank) {
    ranks.push_back(rank);
    RankInput& input = inputs[index];
    const RankInfo& info = infos[index];
    const int64_t shift = -info.offset_ns.value_or(0);
    auto& extra = merged.metadata.extra;
    extra[rank_key(rank, kRankSourceKey)] = input.source;
    if (info.offset_ns) extra[rank_key(rank, kClockOffsetKey)] = std::to_string(*info.offset_ns);
    if (info.uncertainty_ns)
      extra[rank_key(rank, kClockUncertaintyKey)] = std::to_string(*info.uncertainty_ns);
    if (input.trace.metadata.machine != merged.metadata.machine)
      extra[rank_key(rank, "machine")] = input.trace.metadata.machine;

    Trace& trace = input.trace;
    uint64_t top_correlation = 0, top_range = 0;
    for (Activity& a : trace.activities) {
      top_correlation = std::max(top_correlation, a.correlation);
      top_range = std::max(top_range, a.range_id);
      if (a.correlation != 0) a.correlation += correlation_base;
      if (a.range_id != 0) a.range_id += range_base;
      a.rank = rank;
      a.start_ns += shift;
      a.end_ns += shift;
      merged.activities.push_back(a);
    }
    for (Range& r : trace.ranges) {
      top_range = std::max(top_range, r.id);
      if (r.id != 0) r.id += range_base;
      r.rank = rank;
      r.start_ns += shift;
      r.end_ns += shift;
      merged.ranges.push_back(r);
    }
    for (Flow& f : trace.flows) {
      for (FlowEnd* end : {&f.from, &f.to}) {
        end->rank = rank;
        end->ns += shift;
      }
      merged.flows.push_back(f);
    }
    correlation_base += top_correlation;
    range_base += top_range;
  }
  for (int64_t r = 0; r < infos.front().world_size && missing.size() < 64; ++r)
    if (!input_of_rank.count(static_cast<int>(r))) missing.push_back(static_cast<int>(r));
  merged.metadata.extra[kMergedRanksKey] = join(ranks);
  if (!missing.empty())
    merged.metadata.extra[kMissingRanksKey] =
        join(missing) +
        (static_cast<int64_t>(ranks.size() + missing.size()) < infos.front().world_size ? ",..."
                                                                                        : "");
  sort_by_start(merged);
  return merged;
}

Trace merge_rank_trace_files(const std::vector<fs::path>& paths, const TraceReadOptions& options) {
  std::vector<RankInput> inputs;
  inputs.reserve(paths.size());
  for (const fs::path& path : paths)
    inputs.push_back({path.string(), read_trace_file(path, options)});
  return merge_rank_traces(std::move(inputs));
}

fs::path rank_trace_path(const fs::path& trace_path, int rank) {
  const std::string tag = ".rank" + std::to_string(rank);
  fs::path stem = trace_path.filename();
  std::string suffix;
  // "t.json.gz": the rank goes before ".json.gz", so the file still reads as JSON.
  if (stem.extension() == ".gz" && stem.stem().has_extension()) {
    suffix = stem.stem().extension().string() + ".gz";
    stem = stem.stem().stem();
  } else {
    suffix = stem.extension().string();
    stem = stem.stem();
  }
  return trace_path.parent_path() / (stem.string() + tag + suffix);
}

std::vector<RankClock> rank_clocks(const TraceMetadata& metadata) {
  std::vector<RankClock> clocks;
  const auto merged = metadata.extra.find(kMergedRanksKey);
  if (merged == metadata.extra.end()) return clocks;
  std::istringstream list(merged->second);
  std::string item;
  while (std::getline(list, item, ',')) {
    RankClock clock;
    try {
      clock.rank = std::stoi(item);
    } catch (const std::logic_error&) {
      continue;  // a damaged list costs that entry, not the report
    }
    const auto value = [&](const char* key) -> std::optional<int64_t> {
      const auto it = metadata.extra.find(rank_key(clock.rank, key));
      if (it == metadata.extra.end()) return std::nullopt;
      try {
        return std::stoll(it->second);
      } catch (const std::logic_error&) {
        return std::nullopt;
      }
    };
    clock.offset_ns = value(kClockOffsetKey);
    clock.uncertainty_ns = value(kClockUncertaintyKey);
    if (const auto it = metadata.extra.find(rank_key(clock.rank, kRankSourceKey));
        it != metadata.extra.end())
      clock.source = it->second;
    clocks.push_back(clock);
  }
  return clocks;
}

}  // namespace tunescope::profiler
