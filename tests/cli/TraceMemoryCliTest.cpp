// `tunescope report` streams a trace: a file larger than the address space the process
// has left beyond its own needs (ulimit -v) reports fine when few of its events are kept.
// The binary's own needs vary by build (the CUDA build maps cuFFT, cuDNN... at start-up),
// so they are measured first.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "tests/cli/RunCli.h"

namespace {

namespace fs = std::filesystem;

using Result = tunescope::test_support::CliResult;
using tunescope::test_support::run_command;

Result report_under_limit(uint64_t address_space_kib, const fs::path& trace) {
  return run_command("ulimit -v " + std::to_string(address_space_kib) +
                     " && OPENBLAS_NUM_THREADS=1 " + TUNESCOPE_CLI_PATH + " report " +
                     trace.string());
}

// The smallest address space (KiB, within 8 MiB) in which `report` reads a tiny trace.
uint64_t baseline_address_space_kib() {
  const fs::path tiny = fs::temp_directory_path() / "tunescope-trace-memory-tiny.json";
  {
    FILE* out = std::fopen(tiny.c_str(), "wb");
    std::fputs(
        R"({"traceEvents":[{"ph":"X","cat":"kernel","name":"k","pid":1,"tid":1,"ts":0,"dur":1}]})",
        out);
    std::fclose(out);
  }
  uint64_t fails = 0, works = 64 << 10;
  while (report_under_limit(works, tiny).exit_code != 0) {
    fails = works;
    works *= 2;
    if (works > (uint64_t{64} << 20)) break;  // 64 GiB: something else is wrong; the test will say
  }
  while (works - fails > (8 << 10)) {
    const uint64_t mid = (fails + works) / 2;
    (report_under_limit(mid, tiny).exit_code == 0 ? works : fails) = mid;
  }
  fs::remove(tiny);
  return works;
}

TEST(TraceMemoryCli, ReportsATraceLargerThanItsFreeAddressSpace) {
  const fs::path path = fs::temp_directory_path() / "tunescope-trace-memory-cli.json";
  constexpr uint64_t kHeadroomKiB =
      200'000;  // what the trace may use beyond the binary's own needs
  const uint64_t baseline_kib = baseline_address_space_kib();
  {
    FILE* out = std::fopen(path.c_str(), "wb");
    ASSERT_NE(out, nullptr);
    std::fputs("{\"traceEvents\":[\n", out);
    for (int i = 0; i < 3; ++i)
      std::fprintf(
          out,
          "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"kept_kernel_%d\",\"pid\":1,\"tid\":1,"
          "\"ts\":%d.000,\"dur\":1.000},\n",
          i, i * 10);
    // Python function events: read and checked, not kept (runtime calls are kept now, as
    // the launches of their kernels).
    std::string line =
        R"({"ph":"X","cat":"python_function","name":"train.py(12): step","pid":1,"tid":2,)"
        R"("ts":5.000,"dur":0.500,"args":{"correlation":42,"padding":"...."}},)"
        "\n";
    std::string block;
    while (block.size() < (1u << 20)) block += line;
    const uint64_t target = (kHeadroomKiB << 10) * 5 / 4;
    for (uint64_t written = 0; written < target; written += block.size())
      ASSERT_EQ(std::fwrite(block.data(), 1, block.size(), out), block.size());
    std::fputs("{\"ph\":\"i\",\"name\":\"end\",\"pid\":1,\"tid\":1,\"ts\":99}\n]}\n", out);
    ASSERT_EQ(std::fclose(out), 0);
  }
  ASSERT_GT(fs::file_size(path), kHeadroomKiB << 10);

  const Result r = report_under_limit(baseline_kib + kHeadroomKiB, path);
  fs::remove(path);
  EXPECT_EQ(r.exit_code, 0) << "address space " << baseline_kib << " + " << kHeadroomKiB << " KiB\n"
                            << r.output;
  for (const char* name : {"kept_kernel_0", "kept_kernel_1", "kept_kernel_2"})
    EXPECT_NE(r.output.find(name), std::string::npos) << r.output;
}

}  // namespace
