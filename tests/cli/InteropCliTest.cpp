// `tunescope export` and `tunescope report` as a user runs them: a profiled trace
// converts to every format and reports the same figures from each; PyTorch traces
// report; bad files and formats exit 2 naming the culprit.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "profiler/TraceFiles.h"
#include "tests/cli/RunCli.h"
#include "tests/core/ScratchDir.h"

namespace {

namespace fs = std::filesystem;
using tunescope::test_support::run_cli;

// The report after its header (the header names the file, which differs).
std::string report_body(const std::string& output) {
  const size_t body = output.find("\n\n");
  return body == std::string::npos ? output : output.substr(body + 2);
}

TEST(InteropCli, ExportsAProfileToEveryFormatAndReportsTheSameFigures) {
  tunescope::test_support::ScratchDir d;
  const auto profiled = run_cli(
      "profile --warmup 0 --steps 1 --conv gemm --data fake --fake-count 32 "
      "--batch 16 --threads 1 --test-limit 16 --trace " +
      d.at("run.json"));
  ASSERT_EQ(profiled.exit_code, 0) << profiled.output;
  const auto original = run_cli("report " + d.at("run.json") + " --top 0");
  ASSERT_EQ(original.exit_code, 0) << original.output;
  EXPECT_NE(original.output.find("gemm"), std::string::npos) << original.output;

  for (const char* format : {"kineto", "nsys-sqlite", "chrome"}) {
    SCOPED_TRACE(format);
    const std::string out =
        d.at(std::string("run.") + format + (format[0] == 'n' ? ".sqlite" : ".json.gz"));
    const auto exported =
        run_cli("export " + d.at("run.json") + " --format " + format + " -o " + out);
    ASSERT_EQ(exported.exit_code, 0) << exported.output;
    const auto report = run_cli("report " + out + " --top 0");
    ASSERT_EQ(report.exit_code, 0) << report.output;
    EXPECT_EQ(report_body(report.output), report_body(original.output));
  }
  // And back: nsys SQLite -> Chrome JSON reads as the original trace.
  const auto back = run_cli("export " + d.at("run.nsys-sqlite.sqlite") + " --format chrome -o " +
                            d.at("back.json"));
  ASSERT_EQ(back.exit_code, 0) << back.output;
  const auto a = tunescope::profiler::read_trace_file(d.at("run.json"));
  const auto b = tunescope::profiler::read_trace_file(d.at("back.json"));
  ASSERT_EQ(a.activities.size(), b.activities.size());
  for (size_t i = 0; i < a.activities.size(); ++i) {
    EXPECT_EQ(a.activities[i].name, b.activities[i].name);
    EXPECT_EQ(a.activities[i].start_ns, b.activities[i].start_ns);
    EXPECT_EQ(a.activities[i].end_ns, b.activities[i].end_ns);
  }
}

TEST(InteropCli, ReportsPyTorchTraces) {
  const std::string data = std::string(TUNESCOPE_TEST_DATA_DIR) + "/pytorch/";
  const auto kineto = run_cli("report " + data + "kineto-cuda-handmade.json");
  EXPECT_EQ(kineto.exit_code, 0) << kineto.output;
  EXPECT_NE(kineto.output.find("implicit_convolve_sgemm"), std::string::npos) << kineto.output;
  EXPECT_NE(kineto.output.find("pytorch-profiler (kineto)"), std::string::npos) << kineto.output;
  const auto legacy = run_cli("report " + data + "lenet5-cpu-torch1.13-legacy.json");
  EXPECT_EQ(legacy.exit_code, 0) << legacy.output;
  EXPECT_NE(legacy.output.find("pytorch-profiler (legacy)"), std::string::npos) << legacy.output;
}

TEST(InteropCli, BadInputsExitTwoNamingTheCulprit) {
  tunescope::test_support::ScratchDir d;
  {
    std::FILE* file = std::fopen(d.at("notes.txt").c_str(), "w");
    std::fputs("not a trace\n", file);
    std::fclose(file);
  }
  const std::string kineto =
      std::string(TUNESCOPE_TEST_DATA_DIR) + "/pytorch/kineto-cuda-handmade.json";
  struct Case {
    std::string args;
    std::string expected;
  };
  const Case cases[] = {
      {"report " + d.at("absent.json"), d.at("absent.json")},
      {"report " + d.at("notes.txt"), d.at("notes.txt")},
      {"export " + d.at("notes.txt") + " --format kineto -o " + d.at("x.json"), d.at("notes.txt")},
      {"export " + kineto + " --format perfetto -o " + d.at("x.json"), "perfetto"},
      {"export " + kineto + " --format chrome -o " + d.at("no/such/dir/x.json"),
       d.at("no/such/dir/x.json")},
      {"export " + d.at("notes.txt") + " --format chrome", "--output"},
  };
  for (const Case& c : cases) {
    const auto r = run_cli(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args << "\n" << r.output;
    EXPECT_NE(r.output.find(c.expected), std::string::npos) << c.args << "\n" << r.output;
  }
}

}  // namespace
