// The SQLite layer: typed binds and columns round trip (NULL included), the three open
// modes, transactions that roll back unless committed, errors that name the file, and
// a lock held elsewhere: waited for, and past the busy timeout a SqliteError saying so.
#include "profiler/SqliteDatabase.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "TraceTestFiles.h"

namespace tunescope::profiler {
namespace {

using namespace std::chrono_literals;
using test_files::ScratchDir;

// Runs `body`, which must throw SqliteError; returns it.
template <class Body>
SqliteError expect_sqlite_error(Body&& body) {
  try {
    body();
  } catch (const SqliteError& e) {
    return e;
  }
  ADD_FAILURE() << "no SqliteError";
  return SqliteError("", "", SQLITE_OK);
}

bool has_wal_files(const std::filesystem::path& path) {
  return std::filesystem::exists(path.string() + "-wal") ||
         std::filesystem::exists(path.string() + "-shm");
}

TEST(SqliteDatabaseTest, BindsAndColumnsRoundTripWithNulls) {
  const ScratchDir dir;
  SqliteDatabase db(dir / "values.sqlite", SqliteDatabase::Mode::create);
  db.exec("CREATE TABLE v (i INTEGER, r REAL, t TEXT)");
  const std::string with_nul("a\0b", 3);
  SqliteStatement insert = db.prepare("INSERT INTO v VALUES (?1, ?2, ?3)");
  insert.bind(1, std::numeric_limits<int64_t>::min()).bind(2, 0.1).bind(3, with_nul).run();
  insert.bind(1, 7).bind(2, std::optional<double>()).bind(3, "plain").run();
  insert.bind(1, std::optional<int64_t>(42)).bind(2, std::nullopt).bind(3, std::nullopt).run();
  EXPECT_EQ(db.last_insert_rowid(), 3);

  SqliteStatement select = db.prepare("SELECT i, r, t FROM v ORDER BY rowid");
  ASSERT_TRUE(select.step());
  EXPECT_EQ(select.integer(0), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(select.real(1), 0.1);  // stored as the same 8-byte double
  EXPECT_EQ(select.text(2), with_nul);
  EXPECT_FALSE(select.is_null(1));
  ASSERT_TRUE(select.step());
  EXPECT_EQ(select.integer(0), 7);
  EXPECT_TRUE(select.is_null(1));
  EXPECT_EQ(select.text(2), "plain");
  ASSERT_TRUE(select.step());
  EXPECT_EQ(select.integer(0), 42);
  EXPECT_TRUE(select.is_null(1));
  EXPECT_TRUE(select.is_null(2));
  EXPECT_EQ(select.text(2), "");
  EXPECT_FALSE(select.step());

  EXPECT_TRUE(db.has_table("v"));
  EXPECT_FALSE(db.has_table("w"));
  EXPECT_EQ(db.columns("v"), (std::set<std::string>{"i", "r", "t"}));
}

TEST(SqliteDatabaseTest, ModesCreateOpenAndReadOnly) {
  const ScratchDir dir;
  const auto path = dir / "modes.sqlite";
  {
    SqliteDatabase db(path, SqliteDatabase::Mode::read_write);  // missing: created
    db.exec("CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1)");
    db.exec("PRAGMA application_id = 1234");
    db.use_wal();
  }
  ASSERT_FALSE(has_wal_files(path));  // the last connection folded the WAL back in
  {
    SqliteDatabase db(path, SqliteDatabase::Mode::read_write);  // exists: opened, not emptied
    EXPECT_EQ(db.application_id(), 1234);
  }
  const SqliteError exists =
      expect_sqlite_error([&] { SqliteDatabase(path, SqliteDatabase::Mode::create); });
  EXPECT_EQ(std::string(exists.what()).rfind(path.string() + ": cannot create", 0), 0u)
      << exists.what();

  {
    SqliteDatabase db(path, SqliteDatabase::Mode::read_only);
    SqliteStatement count = db.prepare("SELECT count(*) FROM t");
    ASSERT_TRUE(count.step());
    EXPECT_EQ(count.integer(0), 1);
    EXPECT_FALSE(has_wal_files(path));
    const SqliteError write = expect_sqlite_error([&] { db.exec("INSERT INTO t VALUES (2)"); });
    EXPECT_EQ(std::string(write.what()).rfind(path.string() + ": ", 0), 0u) << write.what();
    EXPECT_NE(write.problem().find("readonly"), std::string::npos) << write.what();
  }
  EXPECT_FALSE(has_wal_files(path));

  const auto missing = dir / "missing.sqlite";
  const SqliteError absent =
      expect_sqlite_error([&] { SqliteDatabase(missing, SqliteDatabase::Mode::read_only); });
  EXPECT_EQ(std::string(absent.what()), missing.string() + ": no such file");
  EXPECT_FALSE(std::filesystem::exists(missing));
}

TEST(SqliteDatabaseTest, ErrorsNameTheFileAndTheStatement) {
  const ScratchDir dir;
  const auto path = dir / "errors.sqlite";
  SqliteDatabase db(path, SqliteDatabase::Mode::create);
  db.exec("CREATE TABLE u (k TEXT PRIMARY KEY)");
  const SqliteError syntax = expect_sqlite_error([&] { db.prepare("SELEC k FROM u"); });
  EXPECT_EQ(std::string(syntax.what()),
            path.string() + ": near \"SELEC\": syntax error (in: SELEC k FROM u)");

  SqliteStatement insert = db.prepare("INSERT INTO u VALUES (?1)");
  insert.bind(1, "same").run();
  const SqliteError unique = expect_sqlite_error([&] { insert.bind(1, "same").run(); });
  EXPECT_EQ(std::string(unique.what()).rfind(path.string() + ": ", 0), 0u) << unique.what();
  EXPECT_NE(unique.problem().find("UNIQUE"), std::string::npos) << unique.what();
  EXPECT_EQ(unique.code(), SQLITE_CONSTRAINT);

  const SqliteError exec = expect_sqlite_error([&] { db.exec("DROP TABLE absent"); });
  EXPECT_NE(exec.problem().find("no such table: absent"), std::string::npos) << exec.what();

  test_files::write_bytes(dir / "text.sqlite",
                          "not a database, just some text that is long enough to have a header");
  const SqliteError text = expect_sqlite_error([&] {
    SqliteDatabase other(dir / "text.sqlite", SqliteDatabase::Mode::read_only);
    other.application_id();
  });
  EXPECT_EQ(std::string(text.what()).rfind((dir / "text.sqlite").string() + ": ", 0), 0u)
      << text.what();
  EXPECT_NE(text.problem().find("not a database"), std::string::npos) << text.what();
}

TEST(SqliteDatabaseTest, TransactionsRollBackUnlessCommitted) {
  const ScratchDir dir;
  SqliteDatabase db(dir / "tx.sqlite", SqliteDatabase::Mode::create);
  db.exec("CREATE TABLE t (x INTEGER)");
  {
    SqliteTransaction transaction(db);
    db.exec("INSERT INTO t VALUES (1)");
    transaction.commit();
  }
  try {
    SqliteTransaction transaction(db);
    db.exec("INSERT INTO t VALUES (2)");
    db.exec("INSERT INTO missing VALUES (3)");  // fails: the transaction unwinds
    transaction.commit();
    FAIL() << "inserted into a missing table";
  } catch (const SqliteError&) {
  }
  SqliteStatement rows = db.prepare("SELECT group_concat(x) FROM t");
  ASSERT_TRUE(rows.step());
  EXPECT_EQ(rows.text(0), "1");
}

// Another connection holds the write lock: a short busy timeout gives up with a message
// saying so; a lock released in time is waited for, by a transaction and by the change
// to WAL (which SQLite refuses at once while another connection holds a lock, so the
// layer retries it).
TEST(SqliteDatabaseTest, WaitsForAnotherWriterThenGivesUpSayingSo) {
  const ScratchDir dir;
  const auto path = dir / "locked.sqlite";
  SqliteDatabase holder(path, SqliteDatabase::Mode::create);
  holder.exec("CREATE TABLE t (x INTEGER)");
  SqliteDatabase waiter(path, SqliteDatabase::Mode::read_write, 100ms);
  {
    SqliteTransaction held(holder);
    const SqliteError busy = expect_sqlite_error([&] { SqliteTransaction(waiter).commit(); });
    EXPECT_EQ(busy.code(), SQLITE_BUSY);
    EXPECT_EQ(
        std::string(busy.what()),
        path.string() + ": still locked by another writer after 100 ms (in: BEGIN IMMEDIATE)");
    const SqliteError wal = expect_sqlite_error([&] { waiter.use_wal(); });
    EXPECT_EQ(wal.code(), SQLITE_BUSY) << wal.what();
  }

  SqliteDatabase patient(path, SqliteDatabase::Mode::read_write);  // the default minute
  for (const bool change_to_wal : {false, true}) {
    auto held = std::make_unique<SqliteTransaction>(holder);
    holder.exec("INSERT INTO t VALUES (1)");
    std::thread release([&] {
      std::this_thread::sleep_for(200ms);
      held->commit();
    });
    if (change_to_wal) {
      EXPECT_NO_THROW(patient.use_wal());
    } else {
      SqliteTransaction mine(patient);
      patient.exec("INSERT INTO t VALUES (2)");
      EXPECT_NO_THROW(mine.commit());
    }
    release.join();
  }
  SqliteStatement mode = patient.prepare("PRAGMA journal_mode");
  ASSERT_TRUE(mode.step());
  EXPECT_EQ(mode.text(0), "wal");
  SqliteStatement rows = patient.prepare("SELECT group_concat(x) FROM t");
  ASSERT_TRUE(rows.step());
  EXPECT_EQ(rows.text(0), "1,2,1");
}

}  // namespace
}  // namespace tunescope::profiler
