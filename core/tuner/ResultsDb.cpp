// SQLite storage of tuning results through the C API, with one RAII statement type.
#include "core/tuner/ResultsDb.h"

#include <sqlite3.h>

#include <algorithm>
#include <ctime>
#include <fstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "core/base/Error.h"
#include "core/base/Registry.h"

namespace tunescope::tuner {

namespace {

constexpr int kApplicationId = 0x54534350;  // "TSCP": marks the file as a tunescope results DB

const char* kSchema = R"sql(
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE machines (
  id INTEGER PRIMARY KEY, cpu TEXT NOT NULL, cores INTEGER NOT NULL, backend TEXT NOT NULL,
  backend_description TEXT NOT NULL, UNIQUE (cpu, cores, backend, backend_description));
CREATE TABLE problems (
  id INTEGER PRIMARY KEY, model TEXT NOT NULL, input_shape TEXT NOT NULL, batch INTEGER NOT NULL,
  UNIQUE (model, input_shape, batch));
CREATE TABLE trials (
  id INTEGER PRIMARY KEY, problem_id INTEGER NOT NULL REFERENCES problems(id),
  machine_id INTEGER NOT NULL REFERENCES machines(id), config TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('ok', 'invalid', 'failed', 'skipped')), reason TEXT NOT NULL,
  median_eps REAL, median_step_ms REAL, min_step_ms REAL, spread REAL, steps INTEGER NOT NULL,
  kernels TEXT NOT NULL, created_at TEXT NOT NULL, concurrent_share REAL, mean_in_flight REAL, eps_low REAL,
  eps_high REAL, stop_rule TEXT);
)sql";

// Added after the first schema: created on opening a file without it.
const char* kStrategyChoicesTable = R"sql(
CREATE TABLE IF NOT EXISTS strategy_choices (
  id INTEGER PRIMARY KEY, problem_id INTEGER NOT NULL REFERENCES problems(id),
  machine_id INTEGER NOT NULL REFERENCES machines(id), requested TEXT NOT NULL, strategy TEXT NOT NULL,
  reason TEXT NOT NULL, estimates TEXT NOT NULL, created_at TEXT NOT NULL);
)sql";

// Columns of `trials` newer than the first schema, with their types: added on opening a
// file without them.
const std::pair<const char*, const char*> kAddedTrialColumns[] = {
    {"concurrent_share", "REAL"}, {"mean_in_flight", "REAL"}, {"eps_low", "REAL"}, {"eps_high", "REAL"},
    {"stop_rule", "TEXT"}};

class Statement {
 public:
  Statement(sqlite3* db, const std::string& sql, const std::filesystem::path& path) : db_(db), path_(path) {
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt_, nullptr) != SQLITE_OK) error("prepare");
  }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  Statement& bind(int i, const std::string& v) {
    check(sqlite3_bind_text(stmt_, i, v.c_str(), static_cast<int>(v.size()), SQLITE_TRANSIENT));
    return *this;
  }
  Statement& bind(int i, int64_t v) {
    check(sqlite3_bind_int64(stmt_, i, v));
    return *this;
  }
  Statement& bind(int i, double v) {
    check(sqlite3_bind_double(stmt_, i, v));
    return *this;
  }
  Statement& bind(int i, const std::optional<double>& v) {
    if (v) return bind(i, *v);
    check(sqlite3_bind_null(stmt_, i));
    return *this;
  }
  // True while a row is available.
  bool step() {
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc != SQLITE_DONE) error("step");
    return false;
  }
  int64_t integer(int col) const { return sqlite3_column_int64(stmt_, col); }
  double real(int col) const { return sqlite3_column_double(stmt_, col); }
  bool is_null(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
  std::string text(int col) const {
    const auto* p = sqlite3_column_text(stmt_, col);
    return p ? reinterpret_cast<const char*>(p) : "";
  }

 private:
  void check(int rc) {
    if (rc != SQLITE_OK) error("bind");
  }
  [[noreturn]] void error(const char* what) {
    fail(ErrorKind::input, "results DB ", path_.string(), ": ", what, ": ", sqlite3_errmsg(db_));
  }
  sqlite3* db_;
  const std::filesystem::path& path_;
  sqlite3_stmt* stmt_ = nullptr;
};

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

std::string cpu_model() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);)
    if (line.rfind("model name", 0) == 0)
      if (auto colon = line.find(':'); colon != std::string::npos)
        return line.substr(line.find_first_not_of(' ', colon + 1));
  return "unknown CPU";
}

}  // namespace

MachineSignature MachineSignature::local(const std::string& backend) {
  MachineSignature m;
  m.cpu = cpu_model();
  m.cores = static_cast<int>(std::thread::hardware_concurrency());
  m.backend = backend;
  m.backend_description = Registry::instance().make_backend(backend)->device_description();
  return m;
}

std::string MachineSignature::str() const {
  return cat(cpu, ", ", cores, " hardware threads; ", backend, ": ", backend_description);
}

std::string kernels_to_json(const std::vector<KernelShare>& kernels) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& k : kernels)
    out.push_back({{"name", k.name}, {"calls", k.calls}, {"total_ms", k.total_ms}, {"share_pct", k.share_pct}});
  return out.dump();
}

TrialRecord record_of(const TrialResult& result) {
  TrialRecord r;
  r.config_json = to_json_text(result.config);
  r.status = result.status;
  r.reason = result.reason;
  r.figures = result.figures;
  r.kernels_json = kernels_to_json(result.kernels);
  r.concurrency = result.concurrency;
  return r;
}

TrialResult result_of(const TrialRecord& record, const std::string& backend) {
  TrialResult t;
  t.config = run_config_from_json_text(record.config_json, cat("results DB trial ", record.id), backend);
  t.status = record.status;
  t.reason = record.reason;
  t.figures = record.figures;
  t.concurrency = record.concurrency;
  t.reused = true;
  try {
    for (const auto& k : nlohmann::json::parse(record.kernels_json))
      t.kernels.push_back({k.at("name").get<std::string>(), k.at("calls").get<size_t>(),
                           k.at("total_ms").get<double>(), k.at("share_pct").get<double>()});
  } catch (const nlohmann::json::exception& e) {
    fail(ErrorKind::input, "results DB trial ", record.id, ": kernels: ", e.what());
  }
  return t;
}

namespace {

// The SQLite URI that opens `path` for reading without leaving files beside it (see
// ResultsDb::Access::read_only).
std::string read_only_uri(const std::filesystem::path& path) {
  std::string uri = "file:";
  for (const char c : path.string()) {
    if (c == '?' || c == '#' || c == '%') uri += cat('%', "0123456789ABCDEF"[(c >> 4) & 0xF], "0123456789ABCDEF"[c & 0xF]);
    else uri += c;
  }
  const bool wal = std::filesystem::exists(path.string() + "-wal");
  return uri + (wal ? "?mode=ro" : "?mode=ro&immutable=1");
}

int open_read_only(const std::filesystem::path& path, sqlite3** db) {
  return sqlite3_open_v2(read_only_uri(path).c_str(), db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nullptr);
}

}  // namespace

ResultsDb::ResultsDb(const std::filesystem::path& path, Access access) : path_(path) {
  const bool read_only = access == Access::read_only;
  if (read_only && !std::filesystem::exists(path)) fail(ErrorKind::input, "results DB ", path.string(), ": no such file");
  const int opened = read_only ? open_read_only(path, &db_)
                               : sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  if (opened != SQLITE_OK) {
    const std::string why = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    db_ = nullptr;
    fail(ErrorKind::input, "results DB ", path.string(), ": cannot open: ", why);
  }
  try {
    sqlite3_busy_timeout(db_, 5000);
    // The first read of the header tells SQLite from anything else ("file is not a database").
    int64_t application_id = 0, tables = 0;
    {
      Statement id(db_, "PRAGMA application_id", path_);
      if (id.step()) application_id = id.integer(0);
      Statement count(db_, "SELECT count(*) FROM sqlite_master", path_);
      if (count.step()) tables = count.integer(0);
    }
    if (application_id == 0 && tables == 0 && !read_only) {
      exec("PRAGMA journal_mode=WAL");
      exec("BEGIN");
      exec(kSchema);
      exec(kStrategyChoicesTable);
      exec(cat("PRAGMA application_id=", kApplicationId));
      Statement meta(db_, "INSERT INTO meta(key, value) VALUES ('schema_version', ?1), ('created_at', ?2)", path_);
      meta.bind(1, std::to_string(kResultsSchemaVersion)).bind(2, utc_now()).step();
      exec("COMMIT");
    } else if (application_id != kApplicationId) {
      fail(ErrorKind::input, "results DB ", path.string(), ": an SQLite database of another application (",
           tables, " tables, application_id ", application_id, "), not a tunescope results DB");
    } else {
      if (!read_only) exec("PRAGMA journal_mode=WAL");
      Statement version(db_, "SELECT value FROM meta WHERE key = 'schema_version'", path_);
      const std::string v = version.step() ? version.text(0) : "";
      if (v != std::to_string(kResultsSchemaVersion))
        fail(ErrorKind::input, "results DB ", path.string(), ": schema version '", v, "', this build reads ",
             kResultsSchemaVersion);
      if (!read_only) add_missing_columns();
    }
    if (!read_only) exec("PRAGMA foreign_keys=ON");
    trial_select_ = "SELECT id, problem_id, machine_id, config, status, reason, median_eps, median_step_ms, min_step_ms, "
                    "spread, steps, kernels, created_at";
    const std::vector<std::string> missing = missing_columns();
    for (const auto& [name, type] : kAddedTrialColumns)
      trial_select_ += std::find(missing.begin(), missing.end(), name) == missing.end() ? cat(", ", name) : ", NULL";
    trial_select_ += " FROM trials ";
  } catch (...) {
    sqlite3_close(db_);
    db_ = nullptr;
    throw;
  }
}

ResultsDb::~ResultsDb() { sqlite3_close(db_); }

bool has_sqlite_header(const std::filesystem::path& path) {
  char header[16] = {};
  std::ifstream in(path, std::ios::binary);
  return in.read(header, sizeof header) && std::string(header, sizeof header) == std::string("SQLite format 3\0", 16);
}

bool ResultsDb::is_results_db(const std::filesystem::path& path) {
  if (!has_sqlite_header(path)) return false;
  sqlite3* db = nullptr;
  int64_t application_id = 0;
  if (open_read_only(path, &db) == SQLITE_OK) {
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db, "PRAGMA application_id", -1, &stmt, nullptr) == SQLITE_OK && sqlite3_step(stmt) == SQLITE_ROW)
      application_id = sqlite3_column_int64(stmt, 0);
    sqlite3_finalize(stmt);
  }
  sqlite3_close(db);
  return application_id == kApplicationId;
}

void ResultsDb::fail_sqlite(const std::string& what) const {
  fail(ErrorKind::input, "results DB ", path_.string(), ": ", what, ": ", sqlite3_errmsg(db_));
}

std::vector<std::string> ResultsDb::missing_columns() const {
  std::vector<std::string> present, missing;
  Statement columns(db_, "PRAGMA table_info(trials)", path_);
  while (columns.step()) present.push_back(columns.text(1));
  for (const auto& [name, type] : kAddedTrialColumns)
    if (std::find(present.begin(), present.end(), name) == present.end()) missing.push_back(name);
  return missing;
}

void ResultsDb::add_missing_columns() {
  for (const auto& [name, type] : kAddedTrialColumns) {
    const std::vector<std::string> missing = missing_columns();
    if (std::find(missing.begin(), missing.end(), name) != missing.end())
      exec(cat("ALTER TABLE trials ADD COLUMN ", name, " ", type));
  }
  exec(kStrategyChoicesTable);
}

void ResultsDb::exec(const std::string& sql) const {
  char* message = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &message) != SQLITE_OK) {
    const std::string why = message ? message : sqlite3_errmsg(db_);
    sqlite3_free(message);
    fail(ErrorKind::input, "results DB ", path_.string(), ": ", why, " (in: ", sql.substr(0, 60), ")");
  }
}

int64_t ResultsDb::machine_id(const MachineSignature& m) {
  Statement insert(db_,
                   "INSERT OR IGNORE INTO machines(cpu, cores, backend, backend_description) VALUES (?1, ?2, ?3, ?4)",
                   path_);
  insert.bind(1, m.cpu).bind(2, int64_t{m.cores}).bind(3, m.backend).bind(4, m.backend_description).step();
  Statement select(db_, "SELECT id FROM machines WHERE cpu = ?1 AND cores = ?2 AND backend = ?3 AND "
                        "backend_description = ?4", path_);
  select.bind(1, m.cpu).bind(2, int64_t{m.cores}).bind(3, m.backend).bind(4, m.backend_description);
  if (!select.step()) fail_sqlite("machine row vanished");
  return select.integer(0);
}

int64_t ResultsDb::problem_id(const ProblemKey& p) {
  Statement insert(db_, "INSERT OR IGNORE INTO problems(model, input_shape, batch) VALUES (?1, ?2, ?3)", path_);
  insert.bind(1, p.model).bind(2, p.input_shape).bind(3, p.batch).step();
  Statement select(db_, "SELECT id FROM problems WHERE model = ?1 AND input_shape = ?2 AND batch = ?3", path_);
  select.bind(1, p.model).bind(2, p.input_shape).bind(3, p.batch);
  if (!select.step()) fail_sqlite("problem row vanished");
  return select.integer(0);
}

int64_t ResultsDb::add_trial(int64_t problem_id, int64_t machine_id, const TrialResult& result) {
  const TrialRecord r = record_of(result);
  exec("BEGIN IMMEDIATE");
  try {
    Statement insert(db_,
                     "INSERT INTO trials(problem_id, machine_id, config, status, reason, median_eps, median_step_ms, "
                     "min_step_ms, spread, steps, kernels, created_at, concurrent_share, mean_in_flight, eps_low, "
                     "eps_high, stop_rule) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, "
                     "?16, ?17)",
                     path_);
    insert.bind(1, problem_id).bind(2, machine_id).bind(3, r.config_json).bind(4, to_string(r.status));
    insert.bind(5, r.reason).bind(6, r.figures.median_eps).bind(7, r.figures.median_step_ms);
    insert.bind(8, r.figures.min_step_ms).bind(9, r.figures.spread).bind(10, r.figures.steps);
    insert.bind(11, r.kernels_json).bind(12, utc_now());
    const auto& c = r.concurrency;
    insert.bind(13, c ? std::optional(c->concurrent_share) : std::nullopt);
    insert.bind(14, c ? std::optional(c->mean_in_flight) : std::nullopt);
    const bool interval = r.figures.has_interval();
    insert.bind(15, interval ? std::optional(r.figures.eps_low) : std::nullopt);
    insert.bind(16, interval ? std::optional(r.figures.eps_high) : std::nullopt);
    insert.bind(17, to_string(r.figures.stop)).step();
    exec("COMMIT");
  } catch (...) {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
  return sqlite3_last_insert_rowid(db_);
}

void ResultsDb::add_strategy_choice(int64_t problem_id, int64_t machine_id, const StrategyChoice& choice) {
  Statement insert(db_,
                   "INSERT INTO strategy_choices(problem_id, machine_id, requested, strategy, reason, estimates, "
                   "created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                   path_);
  insert.bind(1, problem_id).bind(2, machine_id).bind(3, to_string(choice.requested)).bind(4, to_string(choice.run));
  insert.bind(5, choice.reason).bind(6, estimates_to_json(choice.estimates)).bind(7, utc_now()).step();
}

std::optional<StrategyChoice> ResultsDb::latest_strategy_choice(int64_t problem_id, int64_t machine_id) const {
  {
    Statement table(db_, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'strategy_choices'", path_);
    if (!table.step() || table.integer(0) == 0) return std::nullopt;
  }
  Statement select(db_,
                   "SELECT id, requested, strategy, reason, estimates FROM strategy_choices WHERE problem_id = ?1 AND "
                   "machine_id = ?2 ORDER BY id DESC LIMIT 1",
                   path_);
  select.bind(1, problem_id).bind(2, machine_id);
  if (!select.step()) return std::nullopt;
  const std::string row = cat("results DB ", path_.string(), " strategy choice ", select.integer(0));
  StrategyChoice choice;
  try {
    choice.requested = parse_strategy(select.text(1));
    choice.run = parse_strategy(select.text(2));
  } catch (const Error& e) {
    fail(ErrorKind::input, row, ": ", e.what());
  }
  choice.reason = select.text(3);
  choice.estimates = estimates_from_json(select.text(4), row);
  return choice;
}

namespace {

TrialRecord read_trial(const Statement& select) {
  TrialRecord r;
  r.id = select.integer(0);
  r.problem_id = select.integer(1);
  r.machine_id = select.integer(2);
  r.config_json = select.text(3);
  r.status = parse_trial_status(select.text(4));
  r.reason = select.text(5);
  r.figures.median_eps = select.real(6);
  r.figures.median_step_ms = select.real(7);
  r.figures.min_step_ms = select.real(8);
  r.figures.spread = select.real(9);
  r.figures.steps = select.integer(10);
  r.kernels_json = select.text(11);
  r.created_at = select.text(12);
  if (!select.is_null(13) && !select.is_null(14)) r.concurrency = ConcurrencyFigures{select.real(13), select.real(14)};
  if (!select.is_null(15) && !select.is_null(16)) {
    r.figures.eps_low = select.real(15);
    r.figures.eps_high = select.real(16);
  }
  if (!select.is_null(17)) {
    try {
      r.figures.stop = parse_stop_rule(select.text(17));
    } catch (const Error& e) {
      fail(ErrorKind::input, "results DB trial ", r.id, ": stop_rule: ", e.what());
    }
  }
  return r;
}

}  // namespace

std::optional<TrialRecord> ResultsDb::earliest_trial(int64_t problem_id, int64_t machine_id,
                                                     const std::string& config_json,
                                                     const std::vector<TrialStatus>& statuses) const {
  // Re-measurement rows repeat a config with other figures; the sweep's row comes first
  // within a tune, and the prefix tells them apart across tunes.
  Statement select(db_,
                   cat(trial_select_,
                       "WHERE problem_id = ?1 AND machine_id = ?2 AND config = ?3 AND substr(reason, 1, ?4) <> ?5 "
                       "ORDER BY id"),
                   path_);
  const std::string prefix = kRemeasureReason;
  select.bind(1, problem_id).bind(2, machine_id).bind(3, config_json);
  select.bind(4, static_cast<int64_t>(prefix.size())).bind(5, prefix);
  while (select.step()) {
    TrialRecord r = read_trial(select);
    if (std::find(statuses.begin(), statuses.end(), r.status) != statuses.end()) return r;
  }
  return std::nullopt;
}

std::vector<TrialRecord> ResultsDb::trials(int64_t problem_id) const {
  Statement select(db_, cat(trial_select_, "WHERE ?1 = 0 OR problem_id = ?1 ORDER BY id"), path_);
  select.bind(1, problem_id);
  std::vector<TrialRecord> out;
  while (select.step()) out.push_back(read_trial(select));
  return out;
}

std::vector<std::pair<int64_t, int64_t>> ResultsDb::tuned_pairs() const {
  Statement select(db_, "SELECT machine_id, problem_id FROM trials GROUP BY machine_id, problem_id ORDER BY min(id)",
                   path_);
  std::vector<std::pair<int64_t, int64_t>> out;
  while (select.step()) out.emplace_back(select.integer(0), select.integer(1));
  return out;
}

MachineSignature ResultsDb::machine(int64_t machine_id) const {
  Statement select(db_, "SELECT cpu, cores, backend, backend_description FROM machines WHERE id = ?1", path_);
  select.bind(1, machine_id);
  if (!select.step()) fail(ErrorKind::input, "results DB ", path_.string(), ": no machine ", machine_id);
  return {select.text(0), static_cast<int>(select.integer(1)), select.text(2), select.text(3)};
}

ProblemKey ResultsDb::problem(int64_t problem_id) const {
  Statement select(db_, "SELECT model, input_shape, batch FROM problems WHERE id = ?1", path_);
  select.bind(1, problem_id);
  if (!select.step()) fail(ErrorKind::input, "results DB ", path_.string(), ": no problem ", problem_id);
  return {select.text(0), select.text(1), select.integer(2)};
}

}  // namespace tunescope::tuner
