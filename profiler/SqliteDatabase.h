// A thin RAII layer over the SQLite C API shared by the SQLite trace writer and
// reader: one connection, prepared statements with typed binds and columns, schema
// queries. Every failure throws std::runtime_error with SQLite's message; callers add
// the file name.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <string_view>

namespace tunescope::profiler {

class SqliteStatement {
 public:
  SqliteStatement(sqlite3* db, std::string_view sql);
  ~SqliteStatement();
  SqliteStatement(SqliteStatement&& other) noexcept;
  SqliteStatement(const SqliteStatement&) = delete;
  SqliteStatement& operator=(const SqliteStatement&) = delete;
  SqliteStatement& operator=(SqliteStatement&&) = delete;

  // Parameters are 1-based, as in SQLite; an empty optional binds NULL.
  SqliteStatement& bind(int index, int64_t value);
  SqliteStatement& bind(int index, double value);
  SqliteStatement& bind(int index, std::string_view value);
  SqliteStatement& bind(int index, std::optional<int64_t> value);
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
  sqlite3* db_;
  sqlite3_stmt* statement_ = nullptr;
};

class SqliteDatabase {
 public:
  enum class Mode { read_only, create };

  // read_only opens an existing file; create makes a new one (the file must not exist).
  SqliteDatabase(const std::filesystem::path& path, Mode mode);
  ~SqliteDatabase();
  SqliteDatabase(const SqliteDatabase&) = delete;
  SqliteDatabase& operator=(const SqliteDatabase&) = delete;

  void exec(const std::string& sql);
  SqliteStatement prepare(std::string_view sql) { return SqliteStatement(db_, sql); }
  bool has_table(const std::string& name);
  std::set<std::string> columns(const std::string& table);

 private:
  sqlite3* db_ = nullptr;
};

// True when the file starts with SQLite's 16-byte header "SQLite format 3\0".
bool has_sqlite_header(const std::filesystem::path& path);

}  // namespace tunescope::profiler
