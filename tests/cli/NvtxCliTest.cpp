// `tunescope profile` under an NVTX tool, loaded as Nsight Systems is (NVTX_INJECTION64_PATH):
// the NVTX ranges the tool records must be the ranges of the trace tunescope writes,
// by name, category, count and nesting.
#include <gtest/gtest.h>

#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "profiler/TraceFiles.h"
#include "tests/cli/RunCli.h"
#include "tests/core/ScratchDir.h"

namespace {

namespace fs = std::filesystem;
using tunescope::profiler::Range;
using tunescope::profiler::RangeCategory;
using tunescope::test_support::run_cli;

std::vector<std::string> read_lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// Run and iteration ranges are opened by the host thread, phases and layers by the lane
// threads that run them, so per-thread NVTX nesting is the trace's nesting by time
// within each of the two groups, on one lane.
bool opened_by_host(RangeCategory category) {
  return category == RangeCategory::run || category == RangeCategory::candidate ||
         category == RangeCategory::iteration;
}

// "category<TAB>outer/.../name" for every range of the trace, as the recorder writes them.
std::vector<std::string> trace_paths(const std::vector<Range>& ranges) {
  std::vector<std::string> paths;
  for (const Range& range : ranges) {
    std::vector<const Range*> outer;
    for (const Range& other : ranges)
      if (&other != &range && opened_by_host(other.category) == opened_by_host(range.category) &&
          other.device == range.device && other.lane == range.lane &&
          other.start_ns <= range.start_ns && other.end_ns >= range.end_ns)
        outer.push_back(&other);
    std::sort(outer.begin(), outer.end(), [](const Range* a, const Range* b) {
      return a->start_ns != b->start_ns ? a->start_ns < b->start_ns : a->end_ns > b->end_ns;
    });
    std::string path;
    for (const Range* o : outer) path += o->name.str() + "/";
    paths.push_back(to_string(range.category) + "\t" + path + range.name.str());
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

#ifdef TUNESCOPE_NVTX_RECORDER_PATH
constexpr const char* kRecorderPath = TUNESCOPE_NVTX_RECORDER_PATH;
#else
constexpr const char* kRecorderPath = "";
#endif

class NvtxCli : public ::testing::TestWithParam<const char*> {};

TEST_P(NvtxCli, RangesRecordedByAnNvtxToolAreTheTraceRanges) {
  if (*kRecorderPath == '\0')
    GTEST_SKIP()
        << "NVTX 3 headers were not found at configure time: tunescope emits no NVTX ranges";
  tunescope::test_support::ScratchDir d;
  // The CLI inherits the tool from this process's environment.
  ASSERT_EQ(setenv("NVTX_INJECTION64_PATH", kRecorderPath, 1), 0);
  ASSERT_EQ(setenv("TUNESCOPE_NVTX_RECORD", d.at("nvtx.tsv").c_str(), 1), 0);
  // Warm-up steps run untraced: they must push no NVTX ranges either.
  const auto profiled =
      run_cli(std::string("profile --warmup 1 --steps 2 --model lenet5 --data fake --fake-count 64 "
                          "--batch 16 --threads 2 --test-limit 16 ") +
              GetParam() + " --trace " + d.at("run.json"));
  unsetenv("NVTX_INJECTION64_PATH");
  unsetenv("TUNESCOPE_NVTX_RECORD");
  ASSERT_EQ(profiled.exit_code, 0) << profiled.output;
  ASSERT_TRUE(fs::exists(d.at("nvtx.tsv"))) << "the NVTX tool was not loaded";

  std::vector<std::string> nvtx_paths;
  for (const std::string& line : read_lines(d.at("nvtx.tsv"))) {
    std::istringstream fields(line);
    std::string kind, thread, domain, category, path;
    std::getline(fields, kind, '\t');
    ASSERT_EQ(kind, "range") << line;  // no unclosed range, no unbalanced pop
    std::getline(fields, thread, '\t');
    std::getline(fields, domain, '\t');
    std::getline(fields, category, '\t');
    std::getline(fields, path);
    EXPECT_EQ(domain, "tunescope") << line;
    nvtx_paths.push_back(category.append("\t").append(path));
  }
  std::sort(nvtx_paths.begin(), nvtx_paths.end());

  const auto trace = tunescope::profiler::read_trace_file(d.at("run.json"));
  ASSERT_FALSE(trace.ranges.empty());
  const std::vector<std::string> expected = trace_paths(trace.ranges);
  EXPECT_EQ(nvtx_paths, expected);
  // Spot checks of the nesting the comparison relies on.
  EXPECT_EQ(std::count(expected.begin(), expected.end(), "run\tprofile"), 1);
  EXPECT_EQ(std::count(expected.begin(), expected.end(), "iteration\tprofile/train_step"), 2);
  EXPECT_GE(std::count(expected.begin(), expected.end(), "layer\tforward/conv1"), 2);
}

// The default schedule (phases as scopes) and one with gradient lanes and an asynchronous
// update (phases opened and closed by different tasks of a lane).
INSTANTIATE_TEST_SUITE_P(Schedules, NvtxCli, ::testing::Values("", "--streams 3 --async-update"),
                         [](const auto& info) {
                           return info.index == 0 ? "Default" : "StreamsAsyncUpdate";
                         });

}  // namespace
