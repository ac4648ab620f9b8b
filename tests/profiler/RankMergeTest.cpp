// Merging the ranks' own traces into one (profiler::merge_rank_traces) and writing and
// reading ranked traces in every format.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "TraceTestFiles.h"
#include "profiler/ChromeTraceWriter.h"
#include "profiler/KinetoTraceWriter.h"
#include "profiler/NsysSqliteWriter.h"
#include "profiler/RankMerge.h"
#include "profiler/SqliteDatabase.h"
#include "profiler/TraceFiles.h"

namespace tunescope::profiler {
namespace {

using test_files::ScratchDir;
using json = nlohmann::json;

Trace rank_trace(int rank, int world_size, std::optional<int64_t> offset = std::nullopt,
                 std::optional<int64_t> uncertainty = std::nullopt) {
  Trace trace;
  trace.metadata.machine = "Test CPU";
  trace.metadata.backend = "cpu";
  trace.metadata.extra["model"] = "lenet5";
  trace.metadata.extra[kRankKey] = std::to_string(rank);
  trace.metadata.extra[kWorldSizeKey] = std::to_string(world_size);
  if (offset) trace.metadata.extra[kClockOffsetKey] = std::to_string(*offset);
  if (uncertainty) trace.metadata.extra[kClockUncertaintyKey] = std::to_string(*uncertainty);
  return trace;
}

Activity activity(const char* name, int stream, int64_t start, int64_t end,
                  uint64_t correlation = 0, uint64_t range_id = 0) {
  Activity a;
  a.name = name;
  a.stream = stream;
  a.start_ns = start;
  a.end_ns = end;
  a.correlation = correlation;
  a.range_id = range_id;
  return a;
}

// Two ranks whose records sit at the same local times on the same lanes; rank 1's clock
// runs 3000 ns ahead of rank 0's.
std::vector<RankInput> two_ranks() {
  std::vector<RankInput> inputs;
  for (int rank : {1, 0}) {  // out of order on purpose
    Trace t = rank_trace(rank, 2, rank == 1 ? 3000 : 0, rank == 1 ? 150 : 0);
    const int64_t local = rank == 1 ? 3000 : 0;  // the same instant on each clock
    Range step;
    step.name = "step 0";
    step.category = RangeCategory::iteration;
    step.start_ns = local + 1000;
    step.end_ns = local + 9000;
    step.id = 3;
    t.ranges.push_back(step);
    t.activities.push_back(activity("conv.fwd", 0, local + 1000, local + 2000, 5, 3));
    t.activities.push_back(activity("allreduce.bucket0", 1, local + 2500, local + 4000, 0, 3));
    t.flows.push_back(Flow{FlowKind::event, {0, 0, local + 2000}, {0, 1, local + 2500}});
    inputs.push_back({"trace.rank" + std::to_string(rank) + ".json", std::move(t)});
  }
  return inputs;
}

TEST(RankMergeTest, ShiftsEachRankOntoRankZerosClockAndTagsItsRecords) {
  const Trace merged = merge_rank_traces(two_ranks());
  ASSERT_EQ(merged.activities.size(), 4u);
  ASSERT_EQ(merged.ranges.size(), 2u);
  ASSERT_EQ(merged.flows.size(), 2u);
  EXPECT_TRUE(has_ranks(merged));
  EXPECT_EQ(ranks_of(merged), (std::vector<int>{0, 1}));
  // Same instants after the shift: each rank's conv at 1000..2000 on rank 0's clock.
  for (const Activity& a : merged.activities) {
    SCOPED_TRACE(a.name.str() + " of rank " + std::to_string(a.rank));
    if (a.name == "conv.fwd") {
      EXPECT_EQ(a.start_ns, 1000);
      EXPECT_EQ(a.end_ns, 2000);
    } else {
      EXPECT_EQ(a.start_ns, 2500);
    }
  }
  for (const Range& r : merged.ranges) EXPECT_EQ(r.start_ns, 1000);
  for (const Flow& f : merged.flows) {
    EXPECT_EQ(f.from.ns, 2000);
    EXPECT_EQ(f.to.ns, 2500);
    EXPECT_EQ(f.from.rank, f.to.rank);
  }
  // Ids stay unique: rank 1's move above rank 0's, and its activities follow its range.
  std::map<int, uint64_t> range_id_of_rank, conv_correlation;
  for (const Range& r : merged.ranges) range_id_of_rank[r.rank] = r.id;
  EXPECT_EQ(range_id_of_rank[0], 3u);
  EXPECT_EQ(range_id_of_rank[1], 6u);
  for (const Activity& a : merged.activities) {
    EXPECT_EQ(a.range_id, range_id_of_rank[a.rank]);
    if (a.name == "conv.fwd") conv_correlation[a.rank] = a.correlation;
  }
  EXPECT_EQ(conv_correlation[0], 5u);
  EXPECT_EQ(conv_correlation[1], 10u);

  const auto& extra = merged.metadata.extra;
  EXPECT_EQ(extra.at(kWorldSizeKey), "2");
  EXPECT_EQ(extra.at(kMergedRanksKey), "0,1");
  EXPECT_EQ(extra.count(kRankKey), 0u);
  EXPECT_EQ(extra.count(kClockOffsetKey), 0u);
  EXPECT_EQ(extra.count(kMissingRanksKey), 0u);
  EXPECT_EQ(extra.at("model"), "lenet5");
  const std::vector<RankClock> clocks = rank_clocks(merged.metadata);
  ASSERT_EQ(clocks.size(), 2u);
  EXPECT_EQ(clocks[1].rank, 1);
  EXPECT_EQ(clocks[1].offset_ns, 3000);
  EXPECT_EQ(clocks[1].uncertainty_ns, 150);
  EXPECT_EQ(clocks[1].source, "trace.rank1.json");
  EXPECT_EQ(clocks[0].offset_ns, 0);
}

TEST(RankMergeTest, RankPartGivesBackOneRanksRecordsOnRankZerosClock) {
  const Trace merged = merge_rank_traces(two_ranks());
  for (int rank : {0, 1}) {
    SCOPED_TRACE("rank " + std::to_string(rank));
    const Trace part = rank_part(merged, rank);
    ASSERT_EQ(part.activities.size(), 2u);
    ASSERT_EQ(part.ranges.size(), 1u);
    ASSERT_EQ(part.flows.size(), 1u);
    for (const Activity& a : part.activities) EXPECT_EQ(a.rank, rank);
    EXPECT_EQ(part.ranges[0].rank, rank);
    EXPECT_EQ(part.ranges[0].start_ns, 1000);  // still on rank 0's clock
    EXPECT_EQ(part.flows[0].from.rank, rank);
    EXPECT_EQ(part.metadata.extra.at(kMergedRanksKey), "0,1");
  }
  EXPECT_TRUE(rank_part(merged, 5).activities.empty());
}

TEST(RankMergeTest, AnUnmeasuredOffsetIsZeroAndSaidSoAndAMissingRankIsNoted) {
  std::vector<RankInput> inputs;
  inputs.push_back({"a.json", rank_trace(0, 3)});
  inputs.push_back({"c.json", rank_trace(2, 3)});
  inputs[1].trace.activities.push_back(activity("k", 0, 100, 200));
  const Trace merged = merge_rank_traces(std::move(inputs));
  EXPECT_EQ(merged.activities.at(0).start_ns, 100);
  EXPECT_EQ(merged.activities.at(0).rank, 2);
  EXPECT_EQ(merged.metadata.extra.at(kMissingRanksKey), "1");
  const std::vector<RankClock> clocks = rank_clocks(merged.metadata);
  ASSERT_EQ(clocks.size(), 2u);
  EXPECT_FALSE(clocks[1].offset_ns.has_value());
}

// Runs the merge expecting a RankMergeError whose message contains every fragment.
void expect_merge_error(std::vector<RankInput> inputs, const std::vector<std::string>& fragments) {
  try {
    merge_rank_traces(std::move(inputs));
    ADD_FAILURE() << "merged without error";
  } catch (const RankMergeError& e) {
    for (const std::string& fragment : fragments)
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos)
          << "'" << fragment << "' not in: " << e.what();
  }
}

TEST(RankMergeTest, RefusesBadInputsNamingTheFile) {
  expect_merge_error({}, {"no rank traces"});
  {
    std::vector<RankInput> inputs;
    inputs.push_back({"a.json", rank_trace(0, 2)});
    inputs.push_back({"b.json", rank_trace(0, 2)});
    expect_merge_error(std::move(inputs), {"b.json", "rank 0 again", "a.json"});
  }
  {
    std::vector<RankInput> inputs;
    inputs.push_back({"a.json", rank_trace(0, 2)});
    inputs.push_back({"b.json", rank_trace(1, 4)});
    expect_merge_error(std::move(inputs), {"b.json", "world_size 4", "a.json", "world_size 2"});
  }
  {
    Trace plain = rank_trace(0, 2);
    plain.metadata.extra.erase(kRankKey);
    std::vector<RankInput> inputs;
    inputs.push_back({"plain.json", std::move(plain)});
    expect_merge_error(std::move(inputs), {"plain.json", "no 'rank'"});
  }
  {
    std::vector<RankInput> inputs;
    inputs.push_back({"far.json", rank_trace(5, 2)});
    expect_merge_error(std::move(inputs), {"far.json", "rank 5", "outside"});
  }
  {
    Trace bad = rank_trace(1, 2);
    bad.metadata.extra[kClockOffsetKey] = "12us";
    std::vector<RankInput> inputs;
    inputs.push_back({"bad.json", std::move(bad)});
    expect_merge_error(std::move(inputs), {"bad.json", "clock_offset_ns", "'12us'"});
  }
  {
    std::vector<RankInput> once = two_ranks();
    std::vector<RankInput> inputs;
    inputs.push_back({"merged.json", merge_rank_traces(std::move(once))});
    expect_merge_error(std::move(inputs), {"merged.json", "already a merged trace"});
  }
  {
    // Records already tagged with their own rank are fine; another rank's are not.
    Trace own = rank_trace(1, 2);
    own.activities.push_back(activity("k", 0, 0, 10));
    own.activities.back().rank = 1;
    std::vector<RankInput> inputs;
    inputs.push_back({"own.json", own});
    EXPECT_EQ(merge_rank_traces(std::move(inputs)).activities.at(0).rank, 1);
    own.activities.back().rank = 3;
    inputs.clear();
    inputs.push_back({"mixed.json", own});
    expect_merge_error(std::move(inputs), {"mixed.json", "another rank"});
  }
}

TEST(RankMergeTest, FilesAreReadAndACorruptOneIsNamed) {
  ScratchDir dir;
  std::vector<std::filesystem::path> paths;
  for (RankInput& input : two_ranks()) {
    paths.push_back(dir / input.source);
    ChromeTraceWriter().write(input.trace, paths.back());
  }
  const Trace merged = merge_rank_trace_files(paths);
  EXPECT_EQ(ranks_of(merged), (std::vector<int>{0, 1}));
  EXPECT_EQ(merged.metadata.extra.at(rank_key(1, kRankSourceKey)), paths[0].string());

  test_files::write_bytes(dir / "broken.json", "{\"traceEvents\":[{\"ph\":");
  try {
    merge_rank_trace_files({paths[0], dir / "broken.json"});
    ADD_FAILURE() << "read a truncated file";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("broken.json"), std::string::npos) << e.what();
  }
}

TEST(RankMergeTest, RankTracePathInsertsTheRankBeforeTheExtension) {
  EXPECT_EQ(rank_trace_path("out/t.json", 1), std::filesystem::path("out/t.rank1.json"));
  EXPECT_EQ(rank_trace_path("t.json.gz", 12), std::filesystem::path("t.rank12.json.gz"));
  EXPECT_EQ(rank_trace_path("t.sqlite", 0), std::filesystem::path("t.rank0.sqlite"));
  EXPECT_EQ(rank_trace_path("trace", 3), std::filesystem::path("trace.rank3"));
  EXPECT_EQ(rank_trace_path("a.b/run", 2), std::filesystem::path("a.b/run.rank2"));
  EXPECT_EQ(rank_trace_path(".hidden", 3), std::filesystem::path(".hidden.rank3"));
}

// The sample trace (every field) as two ranks with the same lanes and ids: the case
// where a writer or reader that forgot the rank would merge the two.
Trace ranked_sample() {
  std::vector<RankInput> inputs;
  for (int rank : {0, 1}) {
    Trace t = test_files::sample_trace();
    t.metadata.extra[kRankKey] = std::to_string(rank);
    t.metadata.extra[kWorldSizeKey] = "2";
    t.metadata.extra[kClockOffsetKey] = rank == 0 ? "0" : "-1234567";
    t.metadata.extra[kClockUncertaintyKey] = "321";
    inputs.push_back({std::string("r").append(std::to_string(rank)), std::move(t)});
  }
  return merge_rank_traces(std::move(inputs));
}

TEST(RankMergeTest, EveryFormatRoundTripsARankedTrace) {
  ScratchDir dir;
  const Trace trace = ranked_sample();
  ASSERT_TRUE(has_ranks(trace));
  for (const std::string& name : trace_format_names()) {
    SCOPED_TRACE(name);
    const auto path = dir / ("merged." + name);
    make_trace_writer(parse_trace_format(name))->write(trace, path);
    test_files::expect_same_trace(trace, read_trace_file(path));
  }
}

// The merged trace as Perfetto reads Chrome JSON: processes by pid, named by
// process_name metadata events, threads by (pid, tid) named by thread_name.
TEST(RankMergeTest, ChromeExportHasOneNamedProcessPerRank) {
  ScratchDir dir;
  const Trace trace = ranked_sample();
  ChromeTraceWriter().write(trace, dir / "merged.json");
  const json doc = json::parse(test_files::read_bytes(dir / "merged.json"));
  std::map<int64_t, std::string> process_names;
  std::map<std::pair<int64_t, int64_t>, std::string> thread_names;
  std::map<int64_t, std::set<int64_t>> ranks_of_pid;
  std::set<std::pair<int64_t, int64_t>> used;
  std::map<int64_t, int> flow_ends;  // per launch flow id
  ASSERT_FALSE(trace.flows.empty());
  for (const json& e : doc.at("traceEvents")) {
    const std::string ph = e.at("ph");
    const auto pid = e.at("pid").get<int64_t>();
    const auto tid = e.contains("tid") ? e.at("tid").get<int64_t>() : int64_t{-1};
    if (ph == "M") {
      if (e.at("name") == "process_name") {
        EXPECT_FALSE(e.contains("tid")) << e.dump();
        process_names[pid] = e.at("args").at("name");
      }
      if (e.at("name") == "thread_name") thread_names[{pid, tid}] = e.at("args").at("name");
    } else if (ph == "X") {
      ranks_of_pid[pid].insert(e.at("args").at("rank").get<int64_t>());
      used.insert({pid, tid});
    } else if ((ph == "s" || ph == "f") && e.at("cat") == "ac2g") {
      ++flow_ends[e.at("id").get<int64_t>()];
    }
  }
  // Exactly one process per rank, pid = rank + 1 (pid 0 is Perfetto's swapper).
  ASSERT_EQ(ranks_of_pid.size(), 2u);
  EXPECT_EQ(ranks_of_pid[1], (std::set<int64_t>{0}));
  EXPECT_EQ(ranks_of_pid[2], (std::set<int64_t>{1}));
  EXPECT_EQ(process_names, (std::map<int64_t, std::string>{{1, "rank 0"}, {2, "rank 1"}}));
  // Every thread with events is named, with its device: the two devices of a rank
  // never share a tid.
  for (const auto& key : used) {
    ASSERT_TRUE(thread_names.count(key)) << key.first << "/" << key.second;
    const std::string& name = thread_names[key];
    EXPECT_TRUE(name.rfind("CPU", 0) == 0 || name.rfind("host", 0) == 0) << name;
  }
  EXPECT_NE(std::find_if(thread_names.begin(), thread_names.end(),
                         [](const auto& t) { return t.second == "CPU 1 lane 3"; }),
            thread_names.end());
  // Launch flow ids pair one start with one end, never across ranks.
  for (const auto& [id, ends] : flow_ends) EXPECT_EQ(ends, 2) << "flow id " << id;
}

TEST(RankMergeTest, KinetoExportGivesEachRankItsOwnProcessesAndTheWorldSize) {
  ScratchDir dir;
  KinetoTraceWriter().write(ranked_sample(), dir / "merged.json");
  const json doc = json::parse(test_files::read_bytes(dir / "merged.json"));
  EXPECT_EQ(doc.at("distributedInfo").at("world_size"), 2);
  std::map<int64_t, std::set<int64_t>> ranks_of_pid;
  std::map<int64_t, std::string> process_names;
  for (const json& e : doc.at("traceEvents")) {
    const auto pid = e.at("pid").get<int64_t>();
    if (e.at("ph") == "X") ranks_of_pid[pid].insert(e.at("args").at("rank").get<int64_t>());
    if (e.at("ph") == "M" && e.at("name") == "process_name")
      process_names[pid] = e.at("args").at("name");
  }
  for (const auto& [pid, ranks] : ranks_of_pid) {
    EXPECT_EQ(ranks.size(), 1u) << "pid " << pid;
    EXPECT_EQ(process_names[pid].rfind("rank " + std::to_string(*ranks.begin()) + " · ", 0), 0u)
        << process_names[pid];
  }
}

// A foreign nsys export of an MPI job (one process per rank, no tunescope side tables):
// its processes become ranks in pid order.
TEST(RankMergeTest, NsysExportOfSeveralProcessesReadsThemAsRanks) {
  ScratchDir dir;
  const Trace trace = ranked_sample();
  NsysSqliteWriter().write(trace, dir / "merged.sqlite");
  {
    SqliteDatabase db(dir / "merged.sqlite", SqliteDatabase::Mode::read_write);
    db.exec("DROP TABLE TUNESCOPE_RECORDS");
    db.exec("DROP TABLE TUNESCOPE_METADATA");
    db.exec("DROP TABLE TUNESCOPE_FLOWS");
  }
  const Trace read = read_trace_file(dir / "merged.sqlite");
  std::map<int, size_t> per_rank, expected;
  for (const Activity& a : read.activities) ++per_rank[a.rank];
  for (const Range& r : read.ranges) ++per_rank[r.rank];
  for (const Activity& a : trace.activities) ++expected[a.rank];
  for (const Range& r : trace.ranges) ++expected[r.rank];
  EXPECT_EQ(per_rank, expected);
}

}  // namespace
}  // namespace tunescope::profiler
