// RAII wrappers of sqlite3 / sqlite3_stmt with exceptions naming the file instead of
// status codes, and the waits for other writers.
#include "profiler/SqliteDatabase.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>
#include <utility>

namespace tunescope::profiler {

namespace fs = std::filesystem;

namespace {

bool is_lock_conflict(int code) {
  return (code & 0xFF) == SQLITE_BUSY || (code & 0xFF) == SQLITE_LOCKED;
}

std::string duration_text(std::chrono::milliseconds wait) {
  const auto ms = wait.count();
  return ms % 1000 == 0 ? std::to_string(ms / 1000) + " s" : std::to_string(ms) + " ms";
}

// The SQLite URI that opens `path` for reading without leaving files beside it (see
// SqliteDatabase::Mode::read_only).
std::string read_only_uri(const fs::path& path) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string uri = "file:";
  for (const char c : path.string()) {
    if (c == '?' || c == '#' || c == '%')
      uri.append({'%', kHex[(c >> 4) & 0xF], kHex[c & 0xF]});
    else
      uri += c;
  }
  const bool wal = fs::exists(path.string() + "-wal");
  return uri + (wal ? "?mode=ro" : "?mode=ro&immutable=1");
}

// Creates `path` empty, refusing one that exists (O_EXCL: two creators cannot both win).
void create_exclusively(const fs::path& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0)
    throw SqliteError(path, std::string("cannot create: ") + std::strerror(errno), SQLITE_CANTOPEN);
  ::close(fd);
}

}  // namespace

SqliteError::SqliteError(const fs::path& path, const std::string& problem, int code)
    : std::runtime_error(path.string() + ": " + problem), problem_(problem), code_(code & 0xFF) {}

SqliteStatement::SqliteStatement(const SqliteDatabase& db, std::string_view sql) : db_(&db) {
  const int status = sqlite3_prepare_v2(db.handle(), sql.data(), static_cast<int>(sql.size()),
                                        &statement_, nullptr);
  if (status != SQLITE_OK) fail(std::string(sql.substr(0, 80)), status);
}

SqliteStatement::~SqliteStatement() { sqlite3_finalize(statement_); }

SqliteStatement::SqliteStatement(SqliteStatement&& other) noexcept
    : db_(other.db_), statement_(std::exchange(other.statement_, nullptr)) {}

std::string SqliteStatement::sql() const {
  const char* text = sqlite3_sql(statement_);
  return text ? text : "";
}

void SqliteStatement::fail(const std::string& sql, int code) const { db_->fail(sql, code); }

void SqliteStatement::fail_bind(int index, int code) const {
  fail("parameter " + std::to_string(index) + " of " + sql().substr(0, 60), code);
}

SqliteStatement& SqliteStatement::bind(int index, int64_t value) {
  if (const int status = sqlite3_bind_int64(statement_, index, value); status != SQLITE_OK)
    fail_bind(index, status);
  return *this;
}
SqliteStatement& SqliteStatement::bind(int index, double value) {
  if (const int status = sqlite3_bind_double(statement_, index, value); status != SQLITE_OK)
    fail_bind(index, status);
  return *this;
}
SqliteStatement& SqliteStatement::bind(int index, std::string_view value) {
  const int status = sqlite3_bind_text(statement_, index, value.data(),
                                       static_cast<int>(value.size()), SQLITE_TRANSIENT);
  if (status != SQLITE_OK) fail_bind(index, status);
  return *this;
}
SqliteStatement& SqliteStatement::bind(int index, std::nullopt_t) {
  if (const int status = sqlite3_bind_null(statement_, index); status != SQLITE_OK)
    fail_bind(index, status);
  return *this;
}

bool SqliteStatement::step() {
  const int status = sqlite3_step(statement_);
  if (status == SQLITE_ROW) return true;
  if (status == SQLITE_DONE) return false;
  fail(sql().substr(0, 80), status);
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
int64_t SqliteStatement::integer(int column) const {
  return sqlite3_column_int64(statement_, column);
}
double SqliteStatement::real(int column) const { return sqlite3_column_double(statement_, column); }
std::string SqliteStatement::text(int column) const {
  const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(statement_, column));
  return text ? std::string(text, static_cast<size_t>(sqlite3_column_bytes(statement_, column)))
              : std::string();
}

SqliteDatabase::SqliteDatabase(const fs::path& path, Mode mode,
                               std::chrono::milliseconds busy_timeout)
    : path_(path), busy_timeout_(busy_timeout) {
  std::error_code ec;
  if (mode == Mode::read_only && !fs::exists(path, ec))
    throw SqliteError(path, "no such file", SQLITE_CANTOPEN);
  if (mode == Mode::create) create_exclusively(path);
  const int status = mode == Mode::read_only
                         ? sqlite3_open_v2(read_only_uri(path).c_str(), &db_,
                                           SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nullptr)
                         : sqlite3_open_v2(path.c_str(), &db_,
                                           SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  if (status != SQLITE_OK) {
    const std::string why = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    throw SqliteError(path, "cannot open: " + why, status);
  }
  // Before any statement: the first one may already meet another writer's lock.
  sqlite3_busy_timeout(db_, static_cast<int>(busy_timeout_.count()));
}

SqliteDatabase::~SqliteDatabase() { sqlite3_close(db_); }

void SqliteDatabase::fail(const std::string& sql, int code) const {
  const std::string why = is_lock_conflict(code) ? "still locked by another writer after " +
                                                       duration_text(busy_timeout_)
                                                 : sqlite3_errmsg(db_);
  throw SqliteError(path_, why + " (in: " + sql + ")", code);
}

void SqliteDatabase::exec(std::string_view sql) {
  const std::string text(sql);
  char* message = nullptr;
  const int status = sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &message);
  if (status == SQLITE_OK) return;
  const std::string why = message ? message : sqlite3_errmsg(db_);
  sqlite3_free(message);
  if (is_lock_conflict(status)) fail(text.substr(0, 60), status);
  throw SqliteError(path_, why + " (in: " + text.substr(0, 60) + ")", status);
}

bool SqliteDatabase::has_table(const std::string& name) const {
  SqliteStatement query = prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?");
  query.bind(1, name);
  return query.step();
}

std::set<std::string> SqliteDatabase::columns(const std::string& table) const {
  SqliteStatement query = prepare("SELECT name FROM pragma_table_info(?)");
  query.bind(1, table);
  std::set<std::string> names;
  while (query.step()) names.insert(query.text(0));
  return names;
}

int64_t SqliteDatabase::application_id() const {
  SqliteStatement query = prepare("PRAGMA application_id");
  return query.step() ? query.integer(0) : 0;
}

int64_t SqliteDatabase::last_insert_rowid() const { return sqlite3_last_insert_rowid(db_); }

void SqliteDatabase::use_wal() {
  const auto deadline = std::chrono::steady_clock::now() + busy_timeout_;
  for (;;) {
    const int status = sqlite3_exec(db_, "PRAGMA journal_mode=WAL", nullptr, nullptr, nullptr);
    if (status == SQLITE_OK) return;
    if (!is_lock_conflict(status) || std::chrono::steady_clock::now() >= deadline)
      fail("PRAGMA journal_mode=WAL", status);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

SqliteTransaction::SqliteTransaction(SqliteDatabase& db) : db_(db) { db_.exec("BEGIN IMMEDIATE"); }

SqliteTransaction::~SqliteTransaction() {
  if (open_) sqlite3_exec(db_.handle(), "ROLLBACK", nullptr, nullptr, nullptr);
}

void SqliteTransaction::commit() {
  db_.exec("COMMIT");
  open_ = false;
}

}  // namespace tunescope::profiler
