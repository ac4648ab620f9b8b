// `tunescope tune` as a user runs it: on tiny fake data it writes the tuned config, the
// results DB and both traces; `train --config` accepts that config; `report` on the DB
// reprints the tune's ranking; bad options and bad files exit 2 naming the culprit.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/cli/RunCli.h"

namespace {

namespace fs = std::filesystem;

using tunescope::test_support::run_cli;
using Result = tunescope::test_support::CliResult;

std::string read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

const std::string kTinyData =
    "--model lenet5 --data fake --fake-count 64 --test-limit 16 --batch 8";

struct TuneDir {
  // One folder per test: CTest runs the tests of this file in parallel processes.
  fs::path dir =
      fs::temp_directory_path() / (std::string("tunescope-tune-cli-") +
                                   ::testing::UnitTest::GetInstance()->current_test_info()->name());
  TuneDir() {
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~TuneDir() { fs::remove_all(dir); }
  std::string at(const std::string& name) const { return (dir / name).string(); }
};

TEST(TuneCli, WritesConfigDbAndTracesThatTrainAccepts) {
  const TuneDir d;
  const Result tune = run_cli("tune " + kTinyData +
                              " --layouts nchw,nhwc --algorithms direct,gemm --threads-list 1 "
                              "--steps 2 --warmup 1 --racing off --db " +
                              d.at("results.sqlite") + " -o " + d.at("tuned.json") +
                              " --trace-dir " + d.at("traces"));
  ASSERT_EQ(tune.exit_code, 0) << tune.output;
  EXPECT_NE(tune.output.find("| 1 |"), std::string::npos) << tune.output;
  EXPECT_NE(tune.output.find("(best)"), std::string::npos) << tune.output;
  EXPECT_NE(tune.output.find("winner:"), std::string::npos) << tune.output;
  // What analyze would name first on the winner's trace, in one line after the winner's.
  const size_t top = tune.output.find("top finding: ", tune.output.find("winner:"));
  ASSERT_NE(top, std::string::npos) << tune.output;
  const std::string top_line = tune.output.substr(top, tune.output.find('\n', top) - top);
  EXPECT_TRUE(top_line.find("gain: ") != std::string::npos ||
              top_line.find("none above 1 %") != std::string::npos)
      << top_line;
  // The winner's row gives its median ex/s with the 95% interval of its rounds.
  const size_t best = tune.output.find("(best)");
  const std::string best_row = tune.output.substr(best, tune.output.find('\n', best) - best);
  EXPECT_NE(best_row.find(" ["), std::string::npos) << best_row;
  EXPECT_NE(best_row.find("interleaved rounds"), std::string::npos) << best_row;
  EXPECT_NE(tune.output.find("mean paired log step-time ratio"), std::string::npos) << tune.output;
  // auto ran per-layer (the space has per-layer mixes), so its probe timed lenet5's two
  // conv problems at the find's repetitions, and the find at (nchw, 1 thread) took them.
  EXPECT_NE(tune.output.find("; 4 algorithm timings taken from auto's probe"), std::string::npos)
      << tune.output;

  const std::string config = read(d.at("tuned.json"));
  EXPECT_NE(config.find("\"schema\": \"tunescope.config/1\""), std::string::npos) << config;
  EXPECT_NE(config.find("\"examples_per_second\""), std::string::npos) << config;
  EXPECT_EQ(read(d.at("results.sqlite")).rfind("SQLite format 3", 0), 0u);
  EXPECT_TRUE(fs::exists(d.at("traces/best.json")));
  EXPECT_TRUE(fs::exists(d.at("traces/baseline.json")));

  const Result train = run_cli("train --config " + d.at("tuned.json") +
                               " --data fake --fake-count 64 --test-limit 16 --epochs 1");
  ASSERT_EQ(train.exit_code, 0) << train.output;
  EXPECT_NE(train.output.find("batch 8"), std::string::npos)
      << "the config's batch was not applied:\n"
      << train.output;

  // An explicit flag beats the file.
  const Result override =
      run_cli("train --config " + d.at("tuned.json") +
              " --batch 16 --data fake --fake-count 64 --test-limit 16 --epochs 1");
  ASSERT_EQ(override.exit_code, 0) << override.output;
  EXPECT_NE(override.output.find("batch 16"), std::string::npos) << override.output;
}

// The rows of the ranked table(s) in a command's output.
std::vector<std::string> table_rows(const std::string& output) {
  std::vector<std::string> rows;
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("| ", 0) == 0) rows.push_back(line);
  return rows;
}

void sql(const std::string& path, const std::string& statement) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK) << path;
  char* message = nullptr;
  const int rc = sqlite3_exec(db, statement.c_str(), nullptr, nullptr, &message);
  const std::string why = message ? message : "";
  sqlite3_free(message);
  sqlite3_close(db);
  ASSERT_EQ(rc, SQLITE_OK) << statement << ": " << why;
}

TEST(TuneCli, ReportOfTheResultsDbReprintsEachTunesRanking) {
  const TuneDir d;
  const std::string db = " --db " + d.at("results.sqlite");
  // Two problems in one DB: a halving tune (it records ok trials as they leave the race,
  // so the DB order differs from the tune's) and an exhaustive one at another batch.
  const Result halving = run_cli("tune " + kTinyData +
                                 " --algorithms direct,gemm,fft-fftw --streams-list 1,2 "
                                 "--strategy halving --steps 3 --warmup 1" +
                                 db + " -o " + d.at("h.json"));
  ASSERT_EQ(halving.exit_code, 0) << halving.output;
  const Result exhaustive = run_cli(
      "tune --model lenet5 --data fake --fake-count 64 --test-limit 16 --batch 16 "
      "--algorithms direct,gemm --steps 2 --warmup 1" +
      db + " -o " + d.at("e.json"));
  ASSERT_EQ(exhaustive.exit_code, 0) << exhaustive.output;

  const Result report = run_cli("report " + d.at("results.sqlite"));
  ASSERT_EQ(report.exit_code, 0) << report.output;
  std::vector<std::string> expected = table_rows(halving.output);
  for (const std::string& row : table_rows(exhaustive.output)) expected.push_back(row);
  ASSERT_GT(expected.size(), 2u);
  EXPECT_EQ(table_rows(report.output), expected) << report.output;
  EXPECT_NE(report.output.find("2 tuned problems"), std::string::npos) << report.output;
  EXPECT_NE(report.output.find("batch 16"), std::string::npos) << report.output;
}

TEST(TuneCli, ReportOfAPartialResultsDbRanksWhatExists) {
  const TuneDir d;
  const std::string path = d.at("results.sqlite");
  // Racing off: a raced-out second trial would make the stored tune's decision "the only
  // fully measured candidate" instead of an unfinished tune's, depending on the machine's noise.
  const Result tune = run_cli("tune " + kTinyData +
                              " --strategy exhaustive --layouts nchw --algorithms "
                              "direct,gemm,fft-fftw --steps 2 --warmup 1 --racing off --db " +
                              path + " -o " + d.at("t.json"));
  ASSERT_EQ(tune.exit_code, 0) << tune.output;
  // What a tune killed after its first two trials leaves behind.
  sql(path, "DELETE FROM trials WHERE id > 2");
  const Result report = run_cli("report " + path);
  ASSERT_EQ(report.exit_code, 0) << report.output;
  const std::vector<std::string> rows = table_rows(report.output);
  ASSERT_EQ(rows.size(), 3u) << report.output;  // the header and two trials
  EXPECT_NE(rows[1].find("(best)"), std::string::npos) << report.output;
  EXPECT_NE(report.output.find("not re-measured"), std::string::npos) << report.output;
  EXPECT_EQ(report.output.find("fft-fftw"), std::string::npos)
      << report.output;  // the third was never recorded
}

TEST(TuneCli, ReportRefusesAForeignOrNewerSqliteFileNamingIt) {
  const TuneDir d;
  sql(d.at("foreign.sqlite"), "CREATE TABLE orders (id INTEGER PRIMARY KEY, item TEXT)");
  const Result foreign = run_cli("report " + d.at("foreign.sqlite"));
  EXPECT_EQ(foreign.exit_code, 2) << foreign.output;
  EXPECT_NE(foreign.output.find(d.at("foreign.sqlite")), std::string::npos) << foreign.output;
  EXPECT_NE(foreign.output.find("nor a tunescope results DB"), std::string::npos) << foreign.output;

  const Result tune = run_cli("tune " + kTinyData +
                              " --layouts nchw --algorithms direct --steps 1 --warmup 0 --db " +
                              d.at("newer.sqlite") + " -o " + d.at("t.json"));
  ASSERT_EQ(tune.exit_code, 0) << tune.output;
  sql(d.at("newer.sqlite"), "UPDATE meta SET value = '99' WHERE key = 'schema_version'");
  const Result newer = run_cli("report " + d.at("newer.sqlite"));
  EXPECT_EQ(newer.exit_code, 2) << newer.output;
  EXPECT_NE(newer.output.find(d.at("newer.sqlite")), std::string::npos) << newer.output;
  EXPECT_NE(newer.output.find("schema version '99'"), std::string::npos) << newer.output;
}

// `report` and `export` tell files apart by content, not by name: a results DB named
// like a trace, an nsys export named like a DB; a results DB is not a trace to export.
TEST(TuneCli, ReportAndExportTellFilesApartByContent) {
  const TuneDir d;
  const Result tune = run_cli(
      "tune " + kTinyData + " --layouts nchw --algorithms direct --steps 1 --warmup 0 --db " +
      d.at("results.sqlite") + " -o " + d.at("t.json") + " --trace-dir " + d.at("traces"));
  ASSERT_EQ(tune.exit_code, 0) << tune.output;
  fs::copy_file(d.at("results.sqlite"), d.at("results.json"));
  const Result by_name = run_cli("report " + d.at("results.sqlite"));
  const Result by_content = run_cli("report " + d.at("results.json"));
  ASSERT_EQ(by_content.exit_code, 0) << by_content.output;
  EXPECT_NE(by_content.output.find("results DB: " + d.at("results.json")), std::string::npos)
      << by_content.output;
  EXPECT_EQ(table_rows(by_content.output), table_rows(by_name.output));
  EXPECT_FALSE(table_rows(by_content.output).empty()) << by_content.output;

  const Result exported =
      run_cli("export " + d.at("traces") + "/best.json --format nsys-sqlite -o " + d.at("nsys.db"));
  ASSERT_EQ(exported.exit_code, 0) << exported.output;
  const Result nsys = run_cli("report " + d.at("nsys.db"));
  ASSERT_EQ(nsys.exit_code, 0) << nsys.output;
  EXPECT_NE(nsys.output.find("trace: " + d.at("nsys.db")), std::string::npos) << nsys.output;

  const Result db_export =
      run_cli("export " + d.at("results.sqlite") + " --format chrome -o " + d.at("x.json"));
  EXPECT_EQ(db_export.exit_code, 2) << db_export.output;
  EXPECT_NE(db_export.output.find(d.at("results.sqlite") + ": a tunescope results DB, not a trace"),
            std::string::npos)
      << db_export.output;
  EXPECT_FALSE(fs::exists(d.at("x.json")));
}

// Rows of the sweep (not of the final interleaved rounds, whose count depends on how
// many leaders' intervals overlap: 2 to 4, or none when racing left one).
int64_t trial_rows(const std::string& path) {
  sqlite3* db = nullptr;
  int64_t rows = -1;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(
            db, "SELECT count(*) FROM trials WHERE reason NOT LIKE 'interleaved re-measurement%'",
            -1, &stmt, nullptr) == SQLITE_OK &&
        sqlite3_step(stmt) == SQLITE_ROW)
      rows = sqlite3_column_int64(stmt, 0);
    sqlite3_finalize(stmt);
  }
  sqlite3_close(db);
  return rows;
}

TEST(TuneCli, ARetuneReusesTheDbsTrialsUnlessFresh) {
  const TuneDir d;
  const std::string path = d.at("results.sqlite");
  const std::string tune = "tune " + kTinyData +
                           " --strategy exhaustive --layouts nchw,nhwc --algorithms direct,gemm "
                           "--steps 2 --warmup 1 "
                           "--db " +
                           path + " -o " + d.at("t.json");
  const Result first = run_cli(tune);
  ASSERT_EQ(first.exit_code, 0) << first.output;
  EXPECT_EQ(first.output.find("reused"), std::string::npos) << first.output;
  const int64_t candidates = trial_rows(path);  // one row each
  ASSERT_EQ(candidates, 4);

  // The same tune again: every candidate's verdict comes from the DB; only the
  // interleaved rounds of the leaders run (and add their rows).
  const Result again = run_cli(tune);
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_NE(again.output.find("4 trials reused from " + path), std::string::npos) << again.output;
  // Rows that took no part in this tune's rounds (settled in them, or raced out of them)
  // show the DB's figures and say so.
  size_t settled = 0;
  for (const std::string& row : table_rows(again.output))
    settled += row.find("interleaved rounds") != std::string::npos ||
               row.find("raced out") != std::string::npos;
  if (settled < 4) {
    EXPECT_NE(again.output.find("from the results DB"), std::string::npos) << again.output;
  }
  EXPECT_EQ(trial_rows(path), candidates);

  const Result fresh = run_cli(tune + " --fresh");
  ASSERT_EQ(fresh.exit_code, 0) << fresh.output;
  EXPECT_EQ(fresh.output.find("reused"), std::string::npos) << fresh.output;
  EXPECT_EQ(trial_rows(path), 2 * candidates);

  const Result both = run_cli(tune + " --fresh --resume");
  EXPECT_EQ(both.exit_code, 2) << both.output;
  EXPECT_NE(both.output.find("--resume and --fresh"), std::string::npos) << both.output;
}

TEST(TuneCli, BadOptionsAndFilesExitTwoNamingThem) {
  const TuneDir d;
  std::ofstream(d.at("not-a-db.sqlite"))
      << "plain text, not a database at all.......................\n";
  struct Case {
    std::string args;
    std::string expected;
  };
  const std::string out = " -o " + d.at("t.json");
  const Case cases[] = {
      {"tune " + kTinyData + " --strategy random" + out, "random"},
      {"tune " + kTinyData + " --layouts nchw,nwhc" + out, "nwhc"},
      {"tune " + kTinyData + " --algorithms direct,strassen" + out, "strassen"},
      {"tune " + kTinyData + " --threads-list 0" + out, "--threads-list"},
      {"tune " + kTinyData + " --steps 0" + out, "--steps"},
      {"tune " + kTinyData + " --delta 0" + out, "--delta"},
      {"tune " + kTinyData + " --delta 1.5" + out, "--delta"},
      {"tune " + kTinyData + " --max-steps 0" + out, "--max-steps"},
      {"tune " + kTinyData + " --steps 5 --max-steps 3" + out, "--max-steps 3 is below --steps 5"},
      {"tune " + kTinyData + " --max-timing-seconds 0" + out, "--max-timing-seconds"},
      {"tune " + kTinyData + " --max-timing-seconds 1e9" + out, "--max-timing-seconds"},
      {"tune " + kTinyData + " --racing sometimes" + out, "sometimes"},
      {"tune " + kTinyData + " --streams-list 0" + out, "--streams-list"},
      {"tune " + kTinyData + " --async-update-list maybe" + out, "maybe"},
      {"tune " + kTinyData + " --update-on-list device,gpu" + out, "gpu"},
      {"tune " + kTinyData + " --update-on-list device,host" + out,
       "update_on_list (--update-on-list) host: backend cpu keeps"},
      {"tune " + kTinyData, "--out"},
      {"tune " + kTinyData + " --db " + d.at("not-a-db.sqlite") + out, "not-a-db.sqlite"},
  };
  for (const Case& c : cases) {
    const Result r = run_cli(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args << "\n" << r.output;
    EXPECT_NE(r.output.find(c.expected), std::string::npos) << c.args << "\n" << r.output;
  }
}

}  // namespace
