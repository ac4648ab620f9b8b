// RAII wrappers of sqlite3 / sqlite3_stmt with exceptions instead of status codes.
#include "profiler/SqliteDatabase.h"

#include <array>
#include <fstream>
#include <stdexcept>
#include <utility>

namespace tunescope::profiler {

namespace {
[[noreturn]] void fail(sqlite3* db, const std::string& what) {
  throw std::runtime_error(what + ": " + (db ? sqlite3_errmsg(db) : "out of memory"));
}
}  // namespace

SqliteStatement::SqliteStatement(sqlite3* db, std::string_view sql) : db_(db) {
  if (sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()), &statement_, nullptr) !=
      SQLITE_OK)
    fail(db, "SQL error in '" + std::string(sql.substr(0, 80)) + "'");
}

SqliteStatement::~SqliteStatement() { sqlite3_finalize(statement_); }

SqliteStatement::SqliteStatement(SqliteStatement&& other) noexcept
    : db_(other.db_), statement_(std::exchange(other.statement_, nullptr)) {}

SqliteStatement& SqliteStatement::bind(int index, int64_t value) {
  if (sqlite3_bind_int64(statement_, index, value) != SQLITE_OK) fail(db_, "bind");
  return *this;
}
SqliteStatement& SqliteStatement::bind(int index, double value) {
  if (sqlite3_bind_double(statement_, index, value) != SQLITE_OK) fail(db_, "bind");
  return *this;
}
SqliteStatement& SqliteStatement::bind(int index, std::string_view value) {
  if (sqlite3_bind_text(statement_, index, value.data(), static_cast<int>(value.size()),
                        SQLITE_TRANSIENT) != SQLITE_OK)
    fail(db_, "bind");
  return *this;
}
SqliteStatement& SqliteStatement::bind(int index, std::optional<int64_t> value) {
  if (value) return bind(index, *value);
  if (sqlite3_bind_null(statement_, index) != SQLITE_OK) fail(db_, "bind");
  return *this;
}

bool SqliteStatement::step() {
  const int status = sqlite3_step(statement_);
  if (status == SQLITE_ROW) return true;
  if (status == SQLITE_DONE) return false;
  fail(db_, "SQL step");
}

void SqliteStatement::run() {
  while (step()) {
  }
  reset();
}

void SqliteStatement::reset() {
  sqlite3_reset(statement_);
  sqlite3_clear_bindings(statement_);
}

bool SqliteStatement::is_null(int column) const {
  return sqlite3_column_type(statement_, column) == SQLITE_NULL;
}
int64_t SqliteStatement::integer(int column) const { return sqlite3_column_int64(statement_, column); }
double SqliteStatement::real(int column) const { return sqlite3_column_double(statement_, column); }
std::string SqliteStatement::text(int column) const {
  const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(statement_, column));
  return text ? std::string(text, static_cast<size_t>(sqlite3_column_bytes(statement_, column)))
              : std::string();
}

SqliteDatabase::SqliteDatabase(const std::filesystem::path& path, Mode mode) {
  const int flags = mode == Mode::read_only ? SQLITE_OPEN_READONLY
                                            : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
  if (sqlite3_open_v2(path.c_str(), &db_, flags, nullptr) != SQLITE_OK) {
    const std::string message = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    throw std::runtime_error("cannot open database: " + message);
  }
}

SqliteDatabase::~SqliteDatabase() { sqlite3_close(db_); }

void SqliteDatabase::exec(const std::string& sql) {
  char* message = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &message) != SQLITE_OK) {
    const std::string text = message ? message : sqlite3_errmsg(db_);
    sqlite3_free(message);
    throw std::runtime_error("SQL error: " + text);
  }
}

bool SqliteDatabase::has_table(const std::string& name) {
  SqliteStatement query = prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?");
  query.bind(1, std::string_view(name));
  return query.step();
}

std::set<std::string> SqliteDatabase::columns(const std::string& table) {
  SqliteStatement query = prepare("SELECT name FROM pragma_table_info(?)");
  query.bind(1, std::string_view(table));
  std::set<std::string> names;
  while (query.step()) names.insert(query.text(0));
  return names;
}

bool has_sqlite_header(const std::filesystem::path& path) {
  static constexpr char kHeader[] = "SQLite format 3";  // and its terminating NUL
  std::array<char, sizeof kHeader> bytes{};
  std::ifstream in(path, std::ios::binary);
  return in.read(bytes.data(), bytes.size()) &&
         std::equal(bytes.begin(), bytes.end(), std::begin(kHeader));
}

}  // namespace tunescope::profiler
