// `tunescope report` streams a trace: a file larger than the process's whole address
// space (ulimit -v) reports fine when few of its events are kept.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <string>

namespace {

namespace fs = std::filesystem;

struct Result {
  int exit_code;
  std::string output;
};

Result run_shell(const std::string& command) {
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return {-1, "popen failed"};
  std::string output;
  std::array<char, 4096> buffer;
  while (size_t n = fread(buffer.data(), 1, buffer.size(), pipe)) output.append(buffer.data(), n);
  const int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

TEST(TraceMemoryCli, ReportsATraceLargerThanItsAddressSpace) {
  const fs::path path = fs::temp_directory_path() / "tunescope-trace-memory-cli.json";
  constexpr uint64_t kAddressSpaceKiB = 200'000;  // `report` itself needs about 100 MB
  {
    FILE* out = std::fopen(path.c_str(), "wb");
    ASSERT_NE(out, nullptr);
    std::fputs("{\"traceEvents\":[\n", out);
    for (int i = 0; i < 3; ++i)
      std::fprintf(out, "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"kept_kernel_%d\",\"pid\":1,\"tid\":1,"
                        "\"ts\":%d.000,\"dur\":1.000},\n", i, i * 10);
    // Runtime calls: read and checked, not kept.
    std::string line = R"({"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":2,)"
                       R"("ts":5.000,"dur":0.500,"args":{"correlation":42,"padding":"........"}},)"
                       "\n";
    std::string block;
    while (block.size() < (1u << 20)) block += line;
    const uint64_t target = (kAddressSpaceKiB << 10) * 5 / 4;
    for (uint64_t written = 0; written < target; written += block.size())
      ASSERT_EQ(std::fwrite(block.data(), 1, block.size(), out), block.size());
    std::fputs("{\"ph\":\"i\",\"name\":\"end\",\"pid\":1,\"tid\":1,\"ts\":99}\n]}\n", out);
    ASSERT_EQ(std::fclose(out), 0);
  }
  ASSERT_GT(fs::file_size(path), kAddressSpaceKiB << 10);

  const Result r = run_shell("ulimit -v " + std::to_string(kAddressSpaceKiB) + " && OPENBLAS_NUM_THREADS=1 " +
                             TUNESCOPE_CLI_PATH + " report " + path.string());
  fs::remove(path);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  for (const char* name : {"kept_kernel_0", "kept_kernel_1", "kept_kernel_2"})
    EXPECT_NE(r.output.find(name), std::string::npos) << r.output;
}

}  // namespace
