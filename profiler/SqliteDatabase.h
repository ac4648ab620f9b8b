// The project's one layer over the SQLite C API (the Nsight Systems export reader and
// writer, the tuning results DB): a connection opened in one of three modes, prepared
// statements with typed binds and columns, immediate transactions, schema queries.
// Every failure throws SqliteError naming the file. Writers wait for each other: each
// connection has a busy timeout (a minute unless told), and the waits SQLite does not
// do through it (changing the journal mode) are retried here until the same deadline.
#pragma once

#include <sqlite3.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>

namespace tunescope::profiler {

// what(): "<file>: <problem>". problem() alone lets a caller put its own words before it.
class SqliteError : public std::runtime_error {
 public:
  SqliteError(const std::filesystem::path& path, const std::string& problem, int code);
  const std::string& problem() const { return problem_; }
  // SQLite's primary result code (SQLITE_BUSY when another connection held the lock
  // past the busy timeout).
  int code() const { return code_; }

 private:
  std::string problem_;
  int code_;
};

class SqliteDatabase;

class SqliteStatement {
 public:
  SqliteStatement(const SqliteDatabase& db, std::string_view sql);
  ~SqliteStatement();
  SqliteStatement(SqliteStatement&& other) noexcept;
  SqliteStatement(const SqliteStatement&) = delete;
  SqliteStatement& operator=(const SqliteStatement&) = delete;
  SqliteStatement& operator=(SqliteStatement&&) = delete;

  // Parameters are 1-based, as in SQLite; nullopt (or an empty optional) binds NULL.
  SqliteStatement& bind(int index, int64_t value);
  SqliteStatement& bind(int index, int value) { return bind(index, int64_t{value}); }
  SqliteStatement& bind(int index, double value);
  SqliteStatement& bind(int index, std::string_view value);
  SqliteStatement& bind(int index, const std::string& value) {
    return bind(index, std::string_view(value));
  }
  SqliteStatement& bind(int index, const char* value) {
    return bind(index, std::string_view(value));
  }
  SqliteStatement& bind(int index, std::nullopt_t);
  template <class T>
  SqliteStatement& bind(int index, const std::optional<T>& value) {
    return value ? bind(index, *value) : bind(index, std::nullopt);
  }
  // Steps once: true while a row is available, false when done.
  bool step();
  // Runs a statement that returns no rows, then readies it for the next binds.
  void run();
  void reset();

  // Columns are 0-based, as in SQLite.
  bool is_null(int column) const;
  int64_t integer(int column) const;
  double real(int column) const;
  std::string text(int column) const;

 private:
  std::string sql() const;
  [[noreturn]] void fail(const std::string& sql, int code) const;
  [[noreturn]] void fail_bind(int index, int code) const;

  const SqliteDatabase* db_;
  sqlite3_stmt* statement_ = nullptr;
};

class SqliteDatabase {
 public:
  enum class Mode {
    create,      // a new file: one that exists already is refused
    read_write,  // an existing file, or a new one when it is missing
    // Reads only and leaves nothing beside the file: without a -wal file (no writer
    // has it open, none was killed) SQLite opens it immutable, so it takes no locks and
    // creates no -wal or -shm; with one, it reads through the WAL. A missing file is
    // refused.
    read_only,
  };
  static constexpr std::chrono::milliseconds kDefaultBusyTimeout{60'000};

  // `busy_timeout`: how long a statement waits for another connection's lock before it
  // fails with SqliteError (code SQLITE_BUSY) saying the file stayed locked.
  SqliteDatabase(const std::filesystem::path& path, Mode mode,
                 std::chrono::milliseconds busy_timeout = kDefaultBusyTimeout);
  ~SqliteDatabase();
  SqliteDatabase(const SqliteDatabase&) = delete;
  SqliteDatabase& operator=(const SqliteDatabase&) = delete;

  // Runs one or more statements that return no rows.
  void exec(std::string_view sql);
  SqliteStatement prepare(std::string_view sql) const { return SqliteStatement(*this, sql); }
  bool has_table(const std::string& name) const;
  std::set<std::string> columns(const std::string& table) const;
  // PRAGMA application_id: what an application marks its files with (0: unmarked).
  int64_t application_id() const;
  int64_t last_insert_rowid() const;
  // PRAGMA journal_mode=WAL, retried while another connection holds the lock the change
  // needs (SQLite reports that at once rather than through the busy timeout) until the
  // busy timeout has passed.
  void use_wal();

  const std::filesystem::path& path() const { return path_; }
  sqlite3* handle() const { return db_; }
  // Throws SqliteError "<file>: <SQLite's message> (in: <sql>)"; a lock still held past
  // the busy timeout is said so.
  [[noreturn]] void fail(const std::string& sql, int code) const;

 private:
  std::filesystem::path path_;
  sqlite3* db_ = nullptr;
  std::chrono::milliseconds busy_timeout_;
};

// BEGIN IMMEDIATE on construction (the write lock is taken first, waiting for other
// writers through the busy timeout, so what the transaction reads stays true until it
// commits, and no read lock has to be upgraded, which SQLite refuses at once when
// another writer is ahead); COMMIT on commit(), ROLLBACK when destroyed before.
class SqliteTransaction {
 public:
  explicit SqliteTransaction(SqliteDatabase& db);
  ~SqliteTransaction();
  SqliteTransaction(const SqliteTransaction&) = delete;
  SqliteTransaction& operator=(const SqliteTransaction&) = delete;
  void commit();

 private:
  SqliteDatabase& db_;
  bool open_ = true;
};

}  // namespace tunescope::profiler
