// SQLite storage of tuning results through profiler/SqliteDatabase, the project's one
// SQLite layer; its errors become Error(input) naming the DB.
#include "core/tuner/ResultsDb.h"

#include <algorithm>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>

#include "core/base/Error.h"
#include "core/base/HostCpu.h"
#include "core/base/Registry.h"
#include "core/base/UtcTime.h"
#include "core/tuner/TrialRecordFields.h"
#include "profiler/FileKind.h"

namespace tunescope::tuner {

namespace {

using profiler::SqliteDatabase;
using profiler::SqliteStatement;
using profiler::SqliteTransaction;

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

// Added later: the machine probe's figures, one row per (CPU, instruction set, threads);
// a re-measurement replaces its row.
const char* kMachinePeaksTable = R"sql(
CREATE TABLE IF NOT EXISTS machine_peaks (
  cpu TEXT NOT NULL, isa TEXT NOT NULL, threads INTEGER NOT NULL, fma_gflops REAL NOT NULL,
  bandwidth_gbs REAL NOT NULL, theoretical_gflops REAL NOT NULL, theoretical_basis TEXT NOT NULL,
  measured_at TEXT NOT NULL, PRIMARY KEY (cpu, isa, threads));
)sql";

// Added after the first schema: each per-layer find timing, by conv problem (its key
// holds the shape and layout), threads and algorithm, for any model's find to reuse.
const char* kLayerTimingsTable = R"sql(
CREATE TABLE IF NOT EXISTS layer_timings (
  id INTEGER PRIMARY KEY, machine_id INTEGER NOT NULL REFERENCES machines(id), conv_problem TEXT NOT NULL,
  threads INTEGER NOT NULL, algorithm TEXT NOT NULL, repetitions INTEGER NOT NULL, total_ms REAL NOT NULL,
  fwd_ms REAL NOT NULL, bwd_data_ms REAL NOT NULL, bwd_filter_ms REAL NOT NULL, model TEXT NOT NULL,
  created_at TEXT NOT NULL);
)sql";

// Columns of `trials` newer than the first schema (TrialField::added): added on opening a
// file without them.
std::vector<const TrialField*> added_trial_fields() {
  std::vector<const TrialField*> added;
  for (const TrialField& f : trial_fields())
    if (f.added) added.push_back(&f);
  return added;
}

}  // namespace

MachineSignature MachineSignature::local(const std::string& backend) {
  MachineSignature m;
  m.cpu = host_cpu_model();
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
    out.push_back({{"name", k.name},
                   {"calls", k.calls},
                   {"total_ms", k.total_ms},
                   {"share_pct", k.share_pct}});
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
  r.layer_pass_ms = result.layer_pass_ms;
  return r;
}

TrialResult result_of(const TrialRecord& record, const std::string& backend) {
  TrialResult t;
  t.config =
      run_config_from_json_text(record.config_json, cat("results DB trial ", record.id), backend);
  t.status = record.status;
  t.reason = record.reason;
  t.figures = record.figures;
  t.concurrency = record.concurrency;
  t.layer_pass_ms = record.layer_pass_ms;
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
// The SQLite layer's error as the results DB's: Error(input), as the rest of a bad DB.
[[noreturn]] void throw_input_error(const profiler::SqliteError& e) {
  fail(ErrorKind::input, "results DB ", e.what());  // e.what() starts with the file
}
}  // namespace

ResultsDb::ResultsDb(const std::filesystem::path& path, Access access,
                     std::chrono::milliseconds busy_timeout) try
    : path_(path) {
  const bool read_only = access == Access::read_only;
  db_ = std::make_unique<SqliteDatabase>(
      path, read_only ? SqliteDatabase::Mode::read_only : SqliteDatabase::Mode::read_write,
      busy_timeout);
  if (read_only) {
    check_ours();
  } else {
    prepare_for_writing();
    db_->exec("PRAGMA foreign_keys=ON");
  }
  trial_select_ = "SELECT id, problem_id, machine_id, created_at";
  const std::vector<std::string> missing = missing_columns();
  for (const TrialField& f : trial_fields())
    trial_select_ += std::find(missing.begin(), missing.end(), f.name) == missing.end()
                         ? cat(", ", f.name)
                         : ", NULL";
  trial_select_ += " FROM trials ";
} catch (const profiler::SqliteError& e) {
  throw_input_error(e);
}

ResultsDb::~ResultsDb() = default;

void ResultsDb::prepare_for_writing() {
  // Creating the schema, or checking and completing it, is one IMMEDIATE transaction:
  // of writers opening the same new file at once, one creates it while the others wait
  // for its lock, then find it created. A deferred transaction would read first and
  // then fail, without waiting, to take the lock another writer took meanwhile.
  SqliteTransaction transaction(*db_);
  if (db_->application_id() == 0 && table_count() == 0) {
    db_->exec(kSchema);
    db_->exec(kStrategyChoicesTable);
    db_->exec(kMachinePeaksTable);
    db_->exec(kLayerTimingsTable);
    add_missing_columns();  // the trial fields added after the first schema (TrialField::added)
    db_->exec(cat("PRAGMA application_id=", profiler::kResultsDbApplicationId));
    db_->prepare("INSERT INTO meta(key, value) VALUES ('schema_version', ?1), ('created_at', ?2)")
        .bind(1, std::to_string(kResultsSchemaVersion))
        .bind(2, utc_now_iso8601())
        .run();
  } else {
    check_ours();
    add_missing_columns();
  }
  transaction.commit();
  // After the check: another application's database keeps its journal mode.
  db_->use_wal();
}

int64_t ResultsDb::table_count() const {
  SqliteStatement count = db_->prepare("SELECT count(*) FROM sqlite_master");
  return count.step() ? count.integer(0) : 0;
}

void ResultsDb::check_ours() const {
  const int64_t application_id = db_->application_id();
  if (application_id != profiler::kResultsDbApplicationId)
    fail(ErrorKind::input, "results DB ", path_.string(),
         ": an SQLite database of another application (", table_count(), " tables, application_id ",
         application_id, "), not a tunescope results DB");
  SqliteStatement version = db_->prepare("SELECT value FROM meta WHERE key = 'schema_version'");
  const std::string v = version.step() ? version.text(0) : "";
  if (v != std::to_string(kResultsSchemaVersion))
    fail(ErrorKind::input, "results DB ", path_.string(), ": schema version '", v,
         "', this build reads ", kResultsSchemaVersion);
}

std::vector<std::string> ResultsDb::missing_columns() const {
  const std::set<std::string> present = db_->columns("trials");
  std::vector<std::string> missing;
  for (const TrialField* f : added_trial_fields())
    if (!present.count(f->name)) missing.push_back(f->name);
  return missing;
}

void ResultsDb::add_missing_columns() {
  for (const std::string& name : missing_columns()) {
    for (const TrialField* f : added_trial_fields())
      if (name == f->name) db_->exec(cat("ALTER TABLE trials ADD COLUMN ", name, " ", f->sql_type));
  }
  db_->exec(kStrategyChoicesTable);
  db_->exec(kMachinePeaksTable);
  db_->exec(kLayerTimingsTable);
}

int64_t ResultsDb::machine_id(const MachineSignature& m) try {
  db_->prepare(
         "INSERT OR IGNORE INTO machines(cpu, cores, backend, backend_description) VALUES (?1, ?2, "
         "?3, ?4)")
      .bind(1, m.cpu)
      .bind(2, m.cores)
      .bind(3, m.backend)
      .bind(4, m.backend_description)
      .run();
  SqliteStatement select = db_->prepare(
      "SELECT id FROM machines WHERE cpu = ?1 AND cores = ?2 AND backend = ?3 AND "
      "backend_description = ?4");
  select.bind(1, m.cpu).bind(2, m.cores).bind(3, m.backend).bind(4, m.backend_description);
  if (!select.step())
    fail(ErrorKind::input, "results DB ", path_.string(), ": machine row vanished");
  return select.integer(0);
} catch (const profiler::SqliteError& e) {
  throw_input_error(e);
}

int64_t ResultsDb::problem_id(const ProblemKey& p) try {
  db_->prepare("INSERT OR IGNORE INTO problems(model, input_shape, batch) VALUES (?1, ?2, ?3)")
      .bind(1, p.model)
      .bind(2, p.input_shape)
      .bind(3, p.batch)
      .run();
  SqliteStatement select =
      db_->prepare("SELECT id FROM problems WHERE model = ?1 AND input_shape = ?2 AND batch = ?3");
  select.bind(1, p.model).bind(2, p.input_shape).bind(3, p.batch);
  if (!select.step())
    fail(ErrorKind::input, "results DB ", path_.string(), ": problem row vanished");
  return select.integer(0);
} catch (const profiler::SqliteError& e) {
  throw_input_error(e);
}

int64_t ResultsDb::add_trial(int64_t problem_id, int64_t machine_id,
                             const TrialResult& result) try {
  TrialRecord r = record_of(result);
  // A pruned row is stored as skipped with a marked reason: the status column's CHECK
  // (in every file written before pruning) allows no other value, and an older build
  // reads it as a candidate that was not measured, which it is.
  if (r.status == TrialStatus::pruned) {
    r.status = TrialStatus::skipped;
    r.reason = kPrunedReasonPrefix + r.reason;
  }
  SqliteTransaction transaction(*db_);
  std::string columns = "problem_id, machine_id, created_at", values = "?1, ?2, ?3";
  for (size_t k = 0; k < trial_fields().size(); ++k) {
    columns += cat(", ", trial_fields()[k].name);
    values += cat(", ?", k + 4);
  }
  SqliteStatement insert =
      db_->prepare(cat("INSERT INTO trials(", columns, ") VALUES (", values, ")"));
  insert.bind(1, problem_id).bind(2, machine_id).bind(3, utc_now_iso8601());
  for (size_t k = 0; k < trial_fields().size(); ++k) {
    const int index = static_cast<int>(k) + 4;
    std::visit(
        [&](const auto& value) {
          if constexpr (std::is_same_v<std::decay_t<decltype(value)>, std::monostate>)
            insert.bind(index, std::nullopt);
          else
            insert.bind(index, value);
        },
        trial_fields()[k].get(r));
  }
  insert.run();
  const int64_t id = db_->last_insert_rowid();
  transaction.commit();
  return id;
} catch (const profiler::SqliteError& e) {
  throw_input_error(e);
}

void ResultsDb::add_strategy_choice(int64_t problem_id, int64_t machine_id,
                                    const StrategyChoice& choice) try {
  db_->prepare(
         "INSERT INTO strategy_choices(problem_id, machine_id, requested, strategy, reason, "
         "estimates, "
         "created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)")
      .bind(1, problem_id)
      .bind(2, machine_id)
      .bind(3, to_string(choice.requested))
      .bind(4, to_string(choice.run))
      .bind(5, choice.reason)
      .bind(6, estimates_to_json(choice.estimates))
      .bind(7, utc_now_iso8601())
      .run();
} catch (const profiler::SqliteError& e) {
  throw_input_error(e);
}

void ResultsDb::add_layer_timings(int64_t machine_id, const std::vector<LayerTimingRow>& rows,
                                  const std::string& model) try {
  SqliteTransaction transaction(*db_);
  for (const LayerTimingRow& row : rows) {
    const AlgorithmTiming& t = row.timing;
    db_->prepare(
           "INSERT INTO layer_timings(machine_id, conv_problem, threads, algorithm, repetitions, "
           "total_ms, "
           "fwd_ms, bwd_data_ms, bwd_filter_ms, model, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, "
           "?7, ?8, "
           "?9, ?10, ?11)")
        .bind(1, machine_id)
        .bind(2, row.conv_problem)
        .bind(3, row.threads)
        .bind(4, t.algorithm)
        .bind(5, row.repetitions)
        .bind(6, t.median_ms)
        .bind(7, t.passes.fwd_ms)
        .bind(8, t.passes.bwd_data_ms)
        .bind(9, t.passes.bwd_filter_ms)
        .bind(10, model)
        .bind(11, utc_now_iso8601())
        .run();
  }
  transaction.commit();
} catch (const profiler::SqliteError& e) {
  throw_input_error(e);
}

std::optional<AlgorithmTiming> ResultsDb::layer_timing(int64_t machine_id,
                                                       const std::string& conv_problem, int threads,
                                                       const std::string& algorithm,
                                                       int min_repetitions) const try {
  if (!db_->has_table("layer_timings")) return std::nullopt;
  SqliteStatement select = db_->prepare(
      "SELECT total_ms, fwd_ms, bwd_data_ms, bwd_filter_ms FROM layer_timings WHERE machine_id = "
      "?1 AND "
      "conv_problem = ?2 AND threads = ?3 AND algorithm = ?4 AND repetitions >= ?5 ORDER BY id "
      "DESC LIMIT 1");
  select.bind(1, machine_id)
      .bind(2, conv_problem)
      .bind(3, threads)
      .bind(4, algorithm)
      .bind(5, min_repetitions);
  if (!select.step()) return std::nullopt;
  AlgorithmTiming t;
  t.algorithm = algorithm;
  t.median_ms = select.real(0);
  t.passes = {select.real(1), select.real(2), select.real(3)};
  return t;
} catch (const profiler::SqliteError& e) {
  throw_input_error(e);
}

std::optional<StrategyChoice> ResultsDb::latest_strategy_choice(int64_t problem_id,
                                                                int64_t machine_id) const try {
  if (!db_->has_table("strategy_choices")) return std::nullopt;
  SqliteStatement select = db_->prepare(
      "SELECT id, requested, strategy, reason, estimates FROM strategy_choices WHERE problem_id = "
      "?1 AND "
      "machine_id = ?2 ORDER BY id DESC LIMIT 1");
  select.bind(1, problem_id).bind(2, machine_id);
  if (!select.step()) return std::nullopt;
  const std::string row =
      cat("results DB ", path_.string(), " strategy choice ", select.integer(0));
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
} catch (const profiler::SqliteError& e) {
  throw_input_error(e);
}

void ResultsDb::store_machine_peak(const profiler::MachinePeak& p) try {
  if (!(p.fma_gflops > 0) || !(p.bandwidth_gbs > 0) || p.threads < 1)
    fail(ErrorKind::runtime, "results DB ", path_.string(),
         ": refusing a machine peak without figures (", p.isa, ", ", p.threads, " threads)");
  db_->prepare(
         "INSERT OR REPLACE INTO machine_peaks(cpu, isa, threads, fma_gflops, bandwidth_gbs, "
         "theoretical_gflops, theoretical_basis, measured_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, "
         "?8)")
      .bind(1, p.cpu)
      .bind(2, p.isa)
      .bind(3, p.threads)
      .bind(4, p.fma_gflops)
      .bind(5, p.bandwidth_gbs)
      .bind(6, p.theoretical_gflops)
      .bind(7, p.theoretical_basis)
      .bind(8, p.measured_at.empty() ? utc_now_iso8601() : p.measured_at)
      .run();
} catch (const profiler::SqliteError& e) {
  throw_input_error(e);
}

std::vector<profiler::MachinePeak> ResultsDb::machine_peaks(const std::string& cpu) const try {
  std::vector<profiler::MachinePeak> peaks;
  if (!db_->has_table("machine_peaks"))
    return peaks;  // a file from before the probe, opened read-only
  SqliteStatement select = db_->prepare(
      "SELECT cpu, isa, threads, fma_gflops, bandwidth_gbs, theoretical_gflops, theoretical_basis, "
      "measured_at "
      "FROM machine_peaks WHERE cpu = ?1 ORDER BY threads, fma_gflops");
  select.bind(1, cpu);
  while (select.step())
    peaks.push_back({select.text(0), select.text(1), static_cast<int>(select.integer(2)),
                     select.real(3), select.real(4), select.real(5), select.text(6),
                     select.text(7)});
  return peaks;
} catch (const profiler::SqliteError& e) {
  throw_input_error(e);
}

namespace {

TrialRecord read_trial(const SqliteStatement& select) {
  TrialRecord r;
  r.id = select.integer(0);
  r.problem_id = select.integer(1);
  r.machine_id = select.integer(2);
  r.created_at = select.text(3);
  for (size_t k = 0; k < trial_fields().size(); ++k) {
    const TrialField& f = trial_fields()[k];
    const int column = static_cast<int>(k) + 4;
    FieldValue value;
    if (!select.is_null(column)) {
      const std::string type = f.sql_type;
      if (type == "INTEGER")
        value = select.integer(column);
      else if (type == "REAL")
        value = select.real(column);
      else
        value = select.text(column);
    }
    try {
      f.set(r, value);
    } catch (const Error& e) {
      fail(ErrorKind::input, "results DB trial ", r.id, ": ", f.name, ": ", e.what());
    }
  }
  if (r.status == TrialStatus::skipped && r.reason.rfind(kPrunedReasonPrefix, 0) == 0) {
    r.status = TrialStatus::pruned;
    r.reason.erase(0, std::string(kPrunedReasonPrefix).size());
  }
  return r;
}

}  // namespace

std::vector<TrialRecord> ResultsDb::trials(int64_t problem_id) const try {
  SqliteStatement select =
      db_->prepare(cat(trial_select_, "WHERE ?1 = 0 OR problem_id = ?1 ORDER BY id"));
  select.bind(1, problem_id);
  std::vector<TrialRecord> out;
  while (select.step()) out.push_back(read_trial(select));
  return out;
} catch (const profiler::SqliteError& e) {
  throw_input_error(e);
}

std::vector<std::pair<int64_t, int64_t>> ResultsDb::tuned_pairs() const try {
  SqliteStatement select = db_->prepare(
      "SELECT machine_id, problem_id FROM trials GROUP BY machine_id, problem_id ORDER BY min(id)");
  std::vector<std::pair<int64_t, int64_t>> out;
  while (select.step()) out.emplace_back(select.integer(0), select.integer(1));
  return out;
} catch (const profiler::SqliteError& e) {
  throw_input_error(e);
}

MachineSignature ResultsDb::machine(int64_t machine_id) const try {
  SqliteStatement select =
      db_->prepare("SELECT cpu, cores, backend, backend_description FROM machines WHERE id = ?1");
  select.bind(1, machine_id);
  if (!select.step())
    fail(ErrorKind::input, "results DB ", path_.string(), ": no machine ", machine_id);
  return {select.text(0), static_cast<int>(select.integer(1)), select.text(2), select.text(3)};
} catch (const profiler::SqliteError& e) {
  throw_input_error(e);
}

ProblemKey ResultsDb::problem(int64_t problem_id) const try {
  SqliteStatement select =
      db_->prepare("SELECT model, input_shape, batch FROM problems WHERE id = ?1");
  select.bind(1, problem_id);
  if (!select.step())
    fail(ErrorKind::input, "results DB ", path_.string(), ": no problem ", problem_id);
  return {select.text(0), select.text(1), select.integer(2)};
} catch (const profiler::SqliteError& e) {
  throw_input_error(e);
}

}  // namespace tunescope::tuner
