// sniff_file on every kind of file tunescope reads, each written by the project's own
// writer (a tunescope results DB: tests/core/tuner/ResultsDbFileKindTest.cpp), and on
// what it must not take for one: truncated and corrupt files, an empty file, a
// directory, a FIFO, a missing path, text, gzip of text. Whatever the name: the kinds are
// written under misleading names on purpose.
#include "profiler/FileKind.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <zlib.h>

#include <set>
#include <stdexcept>
#include <string>

#include "TraceTestFiles.h"
#include "profiler/ChromeTraceWriter.h"
#include "profiler/KinetoTraceWriter.h"
#include "profiler/NsysSqliteWriter.h"
#include "profiler/SqliteDatabase.h"
#include "profiler/TraceFiles.h"

namespace tunescope::profiler {
namespace {

using test_files::ScratchDir;
using test_files::write_gzip;

}  // namespace

void PrintTo(FileKind kind, std::ostream* out) { *out << describe(kind); }

namespace {

TEST(FileKindTest, TracesOfEveryWriterAndThePyTorchSamples) {
  const ScratchDir dir;
  const Trace trace = test_files::sample_trace();
  ChromeTraceWriter().write(trace, dir / "ours.db");
  EXPECT_EQ(sniff_file(dir / "ours.db"), FileKind::trace_json);
  ChromeTraceWriter().write(trace, dir / "ours.gz");
  EXPECT_EQ(sniff_file(dir / "ours.gz"), FileKind::trace_json_gz);
  std::filesystem::rename(dir / "ours.gz", dir / "ours.sqlite");
  EXPECT_EQ(sniff_file(dir / "ours.sqlite"), FileKind::trace_json_gz);
  KinetoTraceWriter().write(trace, dir / "kineto.txt");
  EXPECT_EQ(sniff_file(dir / "kineto.txt"), FileKind::trace_json);
  EXPECT_EQ(sniff_file(TUNESCOPE_TEST_DATA_DIR "/pytorch/lenet5-cpu-torch1.13-legacy.json"),
            FileKind::trace_json);
  EXPECT_EQ(sniff_file(TUNESCOPE_TEST_DATA_DIR "/pytorch/kineto-cuda-handmade.json"),
            FileKind::trace_json);
  NsysSqliteWriter().write(trace, dir / "nsys.json");
  EXPECT_EQ(sniff_file(dir / "nsys.json"), FileKind::nsys_sqlite);
}

TEST(FileKindTest, ShapesThatAreNotTraces) {
  const ScratchDir dir;
  EXPECT_EQ(sniff_file(dir / "absent.json"), FileKind::missing);
  EXPECT_EQ(sniff_file(dir.path()), FileKind::directory);
  ASSERT_EQ(mkfifo((dir / "pipe.json").c_str(), 0600), 0);
  EXPECT_EQ(sniff_file(dir / "pipe.json"),
            FileKind::unknown);  // not read: that would wait for a writer
  test_files::write_bytes(dir / "empty.json", "");
  EXPECT_EQ(sniff_file(dir / "empty.json"), FileKind::empty);
  test_files::write_bytes(dir / "notes.json", "hello, not JSON\n");
  EXPECT_EQ(sniff_file(dir / "notes.json"), FileKind::unknown);
  test_files::write_bytes(dir / "blank.json", "  \n\t ");
  EXPECT_EQ(sniff_file(dir / "blank.json"), FileKind::unknown);
  write_gzip(dir / "notes.json.gz", "hello, not JSON\n");
  EXPECT_EQ(sniff_file(dir / "notes.json.gz"), FileKind::unknown);
  test_files::write_bytes(dir / "cut.gz", std::string("\x1f\x8b", 2));  // gzip magic, nothing after
  EXPECT_EQ(sniff_file(dir / "cut.gz"), FileKind::unknown);
  // Leading blanks and a BOM are still JSON; a truncated trace still looks like one
  // (the reader says where it ends).
  test_files::write_bytes(dir / "bom.json", "\xEF\xBB\xBF\n  [{\"name\": \"x\"");
  EXPECT_EQ(sniff_file(dir / "bom.json"), FileKind::trace_json);
}

TEST(FileKindTest, SqliteOfOthersAndBrokenSqlite) {
  const ScratchDir dir;
  {
    SqliteDatabase db(dir / "songs.db", SqliteDatabase::Mode::create);
    db.exec("CREATE TABLE songs (title TEXT); INSERT INTO songs VALUES ('x')");
  }
  EXPECT_EQ(sniff_file(dir / "songs.db"), FileKind::other_sqlite);
  {
    // StringIds alone is not an nsys export: the reader needs an activity or NVTX table.
    SqliteDatabase db(dir / "strings.sqlite", SqliteDatabase::Mode::create);
    db.exec("CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT)");
  }
  EXPECT_EQ(sniff_file(dir / "strings.sqlite"), FileKind::other_sqlite);
  {
    // Marked as a results DB: the mark decides, whatever the tables.
    SqliteDatabase db(dir / "marked.sqlite", SqliteDatabase::Mode::create);
    db.exec("CREATE TABLE x (y INTEGER); PRAGMA application_id = " +
            std::to_string(kResultsDbApplicationId));
  }
  EXPECT_EQ(sniff_file(dir / "marked.sqlite"), FileKind::results_db);

  NsysSqliteWriter().write(test_files::sample_trace(), dir / "nsys.sqlite");
  const std::string nsys = test_files::read_bytes(dir / "nsys.sqlite");
  test_files::write_bytes(dir / "header-only.sqlite", nsys.substr(0, 16));
  EXPECT_EQ(sniff_file(dir / "header-only.sqlite"), FileKind::other_sqlite);
  test_files::write_bytes(dir / "truncated.sqlite", nsys.substr(0, nsys.size() / 3));
  // The schema spans more than the pages left: SQLite that cannot be read, which the
  // nsys reader (where read_trace_file sends it) refuses naming the file.
  EXPECT_EQ(sniff_file(dir / "truncated.sqlite"), FileKind::other_sqlite);
  try {
    read_trace_file(dir / "truncated.sqlite");
    ADD_FAILURE() << "a truncated export was read";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()).rfind((dir / "truncated.sqlite").string() + ": ", 0), 0u)
        << e.what();
  }
  test_files::write_bytes(dir / "garbage.sqlite", nsys.substr(0, 100) + std::string(4000, '\x7f'));
  EXPECT_EQ(sniff_file(dir / "garbage.sqlite"), FileKind::other_sqlite);
  // Sniffing opened them read-only: nothing was written beside or into them.
  EXPECT_EQ(test_files::read_bytes(dir / "nsys.sqlite"), nsys);
  for (const char* name : {"nsys.sqlite", "truncated.sqlite", "garbage.sqlite", "songs.db"})
    EXPECT_FALSE(std::filesystem::exists(dir / (std::string(name) + "-wal"))) << name;
}

TEST(FileKindTest, EveryKindHasItsOwnDescription) {
  std::set<std::string> descriptions;
  for (const FileKind kind : {FileKind::missing, FileKind::directory, FileKind::empty,
                              FileKind::trace_json, FileKind::trace_json_gz, FileKind::nsys_sqlite,
                              FileKind::results_db, FileKind::other_sqlite, FileKind::unknown})
    descriptions.insert(describe(kind));
  EXPECT_EQ(descriptions.size(), 9u);
}

// A results DB is not a trace: read_trace_file says so instead of "not an nsys export".
TEST(FileKindTest, ReadTraceFileRefusesAResultsDbSayingWhatItIs) {
  const ScratchDir dir;
  {
    SqliteDatabase db(dir / "marked.sqlite", SqliteDatabase::Mode::create);
    db.exec("CREATE TABLE x (y INTEGER); PRAGMA application_id = " +
            std::to_string(kResultsDbApplicationId));
  }
  try {
    read_trace_file(dir / "marked.sqlite");
    FAIL() << "read a results DB as a trace";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()),
              (dir / "marked.sqlite").string() +
                  ": a tunescope results DB, not a trace (`tunescope report` and the GUI open it)");
  }
}

}  // namespace
}  // namespace tunescope::profiler
