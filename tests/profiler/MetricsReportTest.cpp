// Tests of the terminal report: rows present, columns aligned whatever the content.
#include <gtest/gtest.h>

#include <sstream>

#include "profiler/MetricsReport.h"

namespace tunescope::profiler {
namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

KernelStats kernel(const std::string& name, size_t calls, int64_t total_ns, double share,
                   ActivityKind kind = ActivityKind::kernel) {
  KernelStats k;
  k.name = name;
  k.kind = kind;
  k.calls = calls;
  k.total_ns = total_ns;
  k.mean_ns = static_cast<double>(total_ns) / static_cast<double>(calls);
  k.share_pct = share;
  return k;
}

// Right-aligned last column: every line of the table ends at the same column.
void expect_aligned(const std::vector<std::string>& lines) {
  ASSERT_GE(lines.size(), 3u);
  for (const std::string& line : lines)
    EXPECT_EQ(line.size(), lines[0].size()) << "'" << line << "'";
}

TEST(MetricsReportTest, KernelTableHasHeaderRowsAndAlignedColumns) {
  const std::string text =
      format_kernel_table({kernel("eigen::TensorPadding<float, 4>", 1200, 214'000'000, 21.4),
                           kernel("relu", 3, 9'500, 0.05)});
  const auto lines = lines_of(text);
  ASSERT_EQ(lines.size(), 4u);  // header, rule, two rows
  EXPECT_NE(lines[0].find("name"), std::string::npos);
  for (const char* header : {"calls", "total ms", "mean us", "share %"})
    EXPECT_NE(lines[0].find(header), std::string::npos);
  EXPECT_EQ(lines[0].find("kind"), std::string::npos);  // one kind only: no kind column
  EXPECT_EQ(lines[1].find_first_not_of(" -"), std::string::npos);
  EXPECT_NE(lines[2].find("eigen::TensorPadding<float, 4>"), std::string::npos);
  EXPECT_NE(lines[2].find("214.000"), std::string::npos);  // total ms
  EXPECT_NE(lines[2].find("178.33"), std::string::npos);   // mean us
  EXPECT_NE(lines[2].find("21.4"), std::string::npos);
  EXPECT_NE(lines[3].find("relu"), std::string::npos);
  EXPECT_NE(lines[3].find("3.17"), std::string::npos);
  expect_aligned(lines);
  // The numbers of both rows start in the same column as their header ends.
  EXPECT_EQ(lines[2].find("1200") + 4, lines[0].find("calls") + 5);
  EXPECT_EQ(lines[3].find(" 3 ") + 2, lines[0].find("calls") + 5);
}

TEST(MetricsReportTest, KernelTableCutsLongNamesAndShowsMixedKinds) {
  const std::string long_name(100, 'x');
  const auto lines = lines_of(format_kernel_table(
      {kernel(long_name, 1, 1000, 90), kernel("HtoD", 1, 100, 10, ActivityKind::memcpy)}, 20));
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_NE(lines[0].find("kind"), std::string::npos);
  EXPECT_NE(lines[2].find(std::string(17, 'x') + "..."), std::string::npos);
  EXPECT_EQ(lines[2].find(std::string(18, 'x')), std::string::npos);
  EXPECT_NE(lines[3].find("memcpy"), std::string::npos);
  expect_aligned(lines);
}

TEST(MetricsReportTest, LaneTableWithGaps) {
  LaneStats lane0{{0, 0}, 12, 3'000'000, {0, 4'000'000}, 0.75};
  LaneStats lane1{{1, 13}, 4, 1'000'000, {0, 1'000'000}, 0.25};
  LaneGaps gaps0{{0, 0}, 2, 1'000'000, 600'000, {}};
  LaneGaps gaps1{{1, 13}, 0, 0, 0, {}};
  const auto lines = lines_of(format_lane_table({lane0, lane1}, {gaps0, gaps1}));
  ASSERT_EQ(lines.size(), 4u);
  for (const char* header :
       {"device", "lane", "activities", "busy ms", "util %", "gaps", "idle ms", "largest gap us"})
    EXPECT_NE(lines[0].find(header), std::string::npos) << header;
  EXPECT_NE(lines[2].find("75.0"), std::string::npos);
  EXPECT_NE(lines[2].find("600.00"), std::string::npos);
  EXPECT_NE(lines[3].find("13"), std::string::npos);
  expect_aligned(lines);

  EXPECT_EQ(lines_of(format_lane_table({lane0})).at(0).find("gaps"), std::string::npos);
}

TEST(MetricsReportTest, ConcurrencyLine) {
  Concurrency c;
  c.busy_ns = 100'000'000;
  c.concurrent_ns = 25'000'000;
  c.concurrent_share = 0.25;
  c.mean_in_flight = 1.25;
  c.max_in_flight = 2;
  const std::string line = format_concurrency(c);
  EXPECT_NE(line.find("25.0% of busy time with >= 2 in flight"), std::string::npos) << line;
  EXPECT_NE(line.find("mean 1.25"), std::string::npos) << line;
  EXPECT_NE(line.find("max 2"), std::string::npos) << line;
  EXPECT_NE(line.find("100.000 ms"), std::string::npos) << line;
}

TEST(MetricsReportTest, SummaryShowsEverySection) {
  Trace trace;
  const char* names[] = {"k0", "k1", "k2"};
  for (int i = 0; i < 3; ++i) {
    Activity a;
    a.name = names[i];
    a.stream = i;
    a.start_ns = i * 1000;
    a.end_ns = a.start_ns + 1500 * (3 - i);
    trace.activities.push_back(a);
  }
  Activity launch = trace.activities[0];
  launch.kind = ActivityKind::overhead;
  launch.name = "launch";
  trace.activities.push_back(launch);
  SummaryOptions options;
  options.top_n = 2;
  const std::string text = format_summary(summarize(trace, options));
  EXPECT_NE(text.find("trace: 4 activities, 0 ranges"), std::string::npos) << text;
  EXPECT_NE(text.find("time by kind: kernel 0.009 ms, overhead 0.004 ms"), std::string::npos)
      << text;
  EXPECT_NE(text.find("kernels (top 2 of 3):"), std::string::npos) << text;
  EXPECT_NE(text.find("k0"), std::string::npos);
  EXPECT_EQ(text.find("k2"), std::string::npos);  // cut by top_n
  EXPECT_NE(text.find("lanes:"), std::string::npos);
  EXPECT_NE(text.find("concurrency:"), std::string::npos);
}

}  // namespace
}  // namespace tunescope::profiler
