// Tests of format dispatch: every writer's file reads back exactly through the one
// reader entry point, and format names parse.
#include <gtest/gtest.h>

#include "TraceTestFiles.h"
#include "profiler/TraceFiles.h"

namespace tunescope::profiler {
namespace {

using test_files::ScratchDir;

TEST(TraceFilesTest, EveryFormatRoundTripsThroughReadTraceFile) {
  ScratchDir dir;
  const Trace trace = test_files::sample_trace();
  for (const std::string& name : trace_format_names()) {
    for (const char* suffix : {"", ".gz"}) {
      if (name == "nsys-sqlite" && *suffix) continue;  // SQLite is never gzipped
      SCOPED_TRACE(name + suffix);
      const auto path = dir / ("trace." + name + suffix);
      make_trace_writer(parse_trace_format(name))->write(trace, path);
      test_files::expect_same_trace(trace, read_trace_file(path));
    }
  }
}

TEST(TraceFilesTest, FormatNamesParseAndUnknownOnesListTheKnown) {
  for (const std::string& name : trace_format_names())
    EXPECT_EQ(to_string(parse_trace_format(name)), name);
  try {
    parse_trace_format("perfetto-proto");
    FAIL() << "accepted an unknown format";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("perfetto-proto"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("nsys-sqlite"), std::string::npos);
  }
}

TEST(TraceFilesTest, RejectsWhatIsNeitherNamingTheFile) {
  ScratchDir dir;
  test_files::write_bytes(dir / "notes.txt", "hello\n");
  try {
    read_trace_file(dir / "notes.txt");
    FAIL() << "read a text file as a trace";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()).rfind((dir / "notes.txt").string() + ": ", 0), 0u) << e.what();
  }
}

}  // namespace
}  // namespace tunescope::profiler
