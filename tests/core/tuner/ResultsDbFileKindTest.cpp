// profiler::sniff_file on results DBs that ResultsDb wrote: closed, held open by a writer
// (read through its WAL), of an older schema; and on a truncated copy. Sniffing leaves
// no -wal/-shm files beside a closed DB. (The other kinds: tests/profiler/FileKindTest.cpp.)
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "TempResultsDb.h"
#include "core/tuner/ResultsDb.h"
#include "profiler/FileKind.h"

namespace tunescope::tuner {
namespace {

namespace fs = std::filesystem;
using profiler::FileKind;
using profiler::sniff_file;

using test_support::ok_trial;

TEST(ResultsDbFileKind, WhatResultsDbWritesIsAResultsDbOpenOrClosed) {
  const test_support::TempResultsDb file("file-kind-" + std::to_string(getpid()) +
                                         ".tune");  // no telling name
  {
    ResultsDb db(file.path);
    EXPECT_EQ(sniff_file(file.path), FileKind::results_db);  // a fresh, empty one
    db.add_trial(db.problem_id({"lenet5", "1x32x32", 8}),
                 db.machine_id({"Test CPU", 2, "cpu", "x"}), ok_trial());
    ASSERT_TRUE(fs::exists(file.path.string() + "-wal"));
    EXPECT_EQ(sniff_file(file.path), FileKind::results_db);  // through the WAL of a writer
  }
  ASSERT_FALSE(fs::exists(file.path.string() + "-wal"));
  EXPECT_EQ(sniff_file(file.path), FileKind::results_db);
  EXPECT_FALSE(fs::exists(file.path.string() + "-wal"));
  EXPECT_FALSE(fs::exists(file.path.string() + "-shm"));

  // The first 100 bytes (SQLite's header, application_id included) and nothing else:
  // too little for SQLite, yet marked as ours; ResultsDb then refuses it naming the file.
  std::ifstream in(file.path, std::ios::binary);
  const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  const test_support::TempResultsDb cut("file-kind-cut-" + std::to_string(getpid()) + ".sqlite");
  std::ofstream(cut.path, std::ios::binary) << bytes.substr(0, 100);
  const FileKind kind = sniff_file(cut.path);
  EXPECT_EQ(kind, FileKind::results_db) << profiler::describe(kind);
  try {
    ResultsDb(cut.path, ResultsDb::Access::read_only).trials();
    ADD_FAILURE() << "read trials from a truncated DB";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find(cut.path.string()), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tunescope::tuner
