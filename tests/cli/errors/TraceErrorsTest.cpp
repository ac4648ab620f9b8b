// Bad trace files given to `tunescope report` and `tunescope export`: JSON of another
// tool, a JSON array of the wrong things, a trace cut short (plain and gzip), and an
// SQLite file of another program. Each exits 2 naming the file and
// the problem and leaves every file as it was (export writes no output). (A file that
// is not JSON at all or does not exist: tests/cli/InteropCliTest.cpp; the readers'
// own cases: tests/profiler/. Huge files belong to the streaming reader's tests.)
#include <gtest/gtest.h>

#include <string>

#include "tests/cli/errors/ErrorCase.h"

namespace tunescope::test_support {
namespace {

class TraceErrors : public ::testing::Test {
 protected:
  // Both commands that read a trace, on `path`.
  void expect_both(const std::string& path, const std::vector<std::string>& problem) const {
    std::vector<std::string> expected = problem;
    expected.insert(expected.begin(), path);
    expect_error(folder.path(), {"report " + path, expected});
    expect_error(folder.path(),
                 {"export " + path + " --format chrome -o " + folder.at("out.json"), expected});
  }
  // A real trace of a short profile run, as the truncated cases' source.
  std::string real_trace() const {
    const fs::path scratch =
        fs::temp_directory_path() / (folder.path().filename().string() + "-source.json");
    const CliResult r = run_cli(
        "profile --data fake --fake-count 32 --batch 16 --threads 1 --test-limit 16 "
        "--warmup 0 --steps 1 --trace " +
        scratch.string());
    EXPECT_EQ(r.exit_code, 0) << r.output;
    std::string bytes = file_bytes(scratch);
    fs::remove(scratch);
    return bytes;
  }

  ScratchDir folder;
};

TEST_F(TraceErrors, JsonOfAnotherTool) {
  write_file(folder.at("package.json"),
             R"({"name": "left-pad", "version": "1.3.0", "dependencies": {}})");
  expect_both(folder.at("package.json"), {"traceEvents"});
}

TEST_F(TraceErrors, JsonArrayOfNumbers) {
  write_file(folder.at("numbers.json"), "[1, 2, 3]\n");
  expect_both(folder.at("numbers.json"), {"event 0"});
}

TEST_F(TraceErrors, TruncatedTrace) {
  const std::string trace = real_trace();
  ASSERT_GT(trace.size(), 1000u);
  write_file(folder.at("cut.json"), trace.substr(0, trace.size() / 2));
  expect_both(folder.at("cut.json"), {"truncated"});
}

TEST_F(TraceErrors, TruncatedGzipTrace) {
  const fs::path scratch =
      fs::temp_directory_path() / (folder.path().filename().string() + "-source.json.gz");
  const CliResult r = run_cli(
      "profile --data fake --fake-count 32 --batch 16 --threads 1 --test-limit 16 "
      "--warmup 0 --steps 1 --trace " +
      scratch.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string gz = file_bytes(scratch);
  fs::remove(scratch);
  write_file(folder.at("cut.json.gz"), gz.substr(0, gz.size() / 2));
  expect_both(folder.at("cut.json.gz"), {"truncated"});
}

TEST_F(TraceErrors, SqliteThatIsNotAnNsysExport) {
  // A browser's history: SQLite (rollback journal), but not Nsight Systems' export schema.
  run_sql(folder.at("places.sqlite"),
          "CREATE TABLE moz_places (id INTEGER PRIMARY KEY, url TEXT);"
          "INSERT INTO moz_places(url) VALUES ('https://example.org');");
  expect_both(folder.at("places.sqlite"), {"not an Nsight Systems export"});
}

}  // namespace
}  // namespace tunescope::test_support
