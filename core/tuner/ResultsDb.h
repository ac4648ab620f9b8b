// The tuning results database (SQLite, WAL): machine signatures, problems and one row
// per trial, each trial committed in its own transaction so that a killed tune loses at
// most the trial in flight. Marked as ours by PRAGMA application_id
// (profiler::kResultsDbApplicationId; profiler::sniff_file tells it from other files)
// and a meta table; any other file is refused with Error(input) naming it. Any number of
// writers (tunes, the GUI's Run tab) may share one file: each waits for the others.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/tuner/Measurement.h"
#include "core/tuner/StrategyChoice.h"
#include "profiler/Roofline.h"
#include "profiler/SqliteDatabase.h"

namespace tunescope::tuner {

// Columns added to a table later (trials.concurrent_share, trials.mean_in_flight,
// trials.eps_low, trials.eps_high, trials.stop_rule) and
// tables added later (strategy_choices, machine_peaks, layer_timings) do not change the version:
// opening an older file adds them (older rows keep NULL), and an older build reads and writes a
// newer file by naming its columns and tables.
inline constexpr int kResultsSchemaVersion = 1;

struct MachineSignature {
  std::string cpu;                  // model name from /proc/cpuinfo
  int cores = 0;                    // hardware threads
  std::string backend;              // "cpu"
  std::string backend_description;  // Backend::device_description(): library versions
  // The local machine as seen through `backend`.
  static MachineSignature local(const std::string& backend);
  std::string str() const;
};

struct ProblemKey {
  std::string model;
  std::string input_shape;  // per-example "c x h x w", e.g. "1x32x32"
  int64_t batch = 0;
};

// A trial as stored: the config as JSON text so a row reads without the code.
struct TrialRecord {
  int64_t id = 0;
  int64_t problem_id = 0;
  int64_t machine_id = 0;
  std::string config_json;
  TrialStatus status = TrialStatus::failed;
  std::string reason;
  TimingFigures figures;     // eps_low/eps_high 0 and stop none where the columns are NULL
  std::string kernels_json;  // [{"name", "calls", "total_ms", "share_pct"}]
  std::optional<ConcurrencyFigures>
      concurrency;  // NULL columns: not measured, or an older build's row
  // A single-layer trial's fastest run per pass, ms (TrialResult::layer_pass_ms); zeros
  // (NULL columns) for a whole config or an older build's row.
  std::array<double, 3> layer_pass_ms{};
  std::string created_at;  // UTC, ISO 8601
};

// The reason of a pruned trial's row starts with this; its status column says skipped
// (ResultsDb::add_trial), and reading it back gives TrialStatus::pruned.
inline constexpr const char* kPrunedReasonPrefix = "pruned: ";

TrialRecord record_of(const TrialResult& result);
// The trial a stored row describes (no trace; `reused` set), its config parsed for
// `backend`. Throws Error(input) naming the DB row when the row does not parse.
TrialResult result_of(const TrialRecord& record, const std::string& backend);
std::string kernels_to_json(const std::vector<KernelShare>& kernels);

class ResultsDb {
 public:
  enum class Access {
    read_write,  // creates the file if missing, adds missing tables and columns
    // Reads only and leaves nothing beside the file: without a -wal file (no tune
    // writing, none killed mid-way) SQLite opens it immutable, so it creates no -wal or
    // -shm either; with one, it reads through it. Writing throws Error(input).
    read_only,
  };
  // Opens (or, read_write, creates) `path`. Throws Error(input) naming the file when it
  // is missing (read_only), not SQLite, another application's SQLite database, or has a
  // newer schema. Every statement waits up to `busy_timeout` for another writer's lock
  // (creating the schema included: of two writers creating one file, the second finds
  // it created), then throws Error(input) saying the file stayed locked.
  explicit ResultsDb(
      const std::filesystem::path& path, Access access = Access::read_write,
      std::chrono::milliseconds busy_timeout = profiler::SqliteDatabase::kDefaultBusyTimeout);
  ~ResultsDb();
  ResultsDb(const ResultsDb&) = delete;
  ResultsDb& operator=(const ResultsDb&) = delete;

  int64_t machine_id(const MachineSignature& machine);
  int64_t problem_id(const ProblemKey& problem);
  // Inserts one trial in its own transaction; returns its id.
  int64_t add_trial(int64_t problem_id, int64_t machine_id, const TrialResult& result);
  // Trials of a problem (all problems when problem_id is 0), in insertion order.
  std::vector<TrialRecord> trials(int64_t problem_id = 0) const;
  // Every (machine_id, problem_id) with trials, in the order of their first trial.
  std::vector<std::pair<int64_t, int64_t>> tuned_pairs() const;
  // Throw Error(input) naming the DB when there is no such row.
  MachineSignature machine(int64_t machine_id) const;
  ProblemKey problem(int64_t problem_id) const;
  // Records the strategy a tune of this problem on this machine ran, and why.
  void add_strategy_choice(int64_t problem_id, int64_t machine_id, const StrategyChoice& choice);
  // The latest such record (none from a build before the record, or a read-only older file).
  std::optional<StrategyChoice> latest_strategy_choice(int64_t problem_id,
                                                       int64_t machine_id) const;

  // The machine probe's cache: stores (or replaces) the figures of one (CPU, path,
  // threads); throws Error(runtime) for a peak without positive figures.
  void store_machine_peak(const profiler::MachinePeak& peak);
  // Every cached figure for this CPU model (empty when none, or the file predates the cache).
  std::vector<profiler::MachinePeak> machine_peaks(const std::string& cpu) const;
  // Per-layer find timings (timed: no skip reason) on a machine, found while tuning
  // `model`, in one transaction.
  struct LayerTimingRow {
    std::string conv_problem;  // ConvProblem::key: shape and layout
    int threads = 1;
    int repetitions = 1;  // the find's cap on timed runs (FindOptions::repetitions)
    AlgorithmTiming timing;
  };
  void add_layer_timings(int64_t machine_id, const std::vector<LayerTimingRow>& rows,
                         const std::string& model);
  // The latest such timing by a find allowed at least `min_repetitions` runs, of any model.
  std::optional<AlgorithmTiming> layer_timing(int64_t machine_id, const std::string& conv_problem,
                                              int threads, const std::string& algorithm,
                                              int min_repetitions) const;

  const std::filesystem::path& path() const { return path_; }

 private:
  // Creates the schema in a new file, or checks and completes an existing one; WAL.
  void prepare_for_writing();
  // Throws Error(input) unless the file is a results DB of this schema version.
  void check_ours() const;
  int64_t table_count() const;
  // Adds the trials columns and the tables a file written before them lacks.
  void add_missing_columns();
  // The trials columns the file lacks (an older file opened read-only).
  std::vector<std::string> missing_columns() const;

  std::filesystem::path path_;
  std::unique_ptr<profiler::SqliteDatabase> db_;
  std::string trial_select_;  // SELECT of a TrialRecord's columns, NULL for the ones the file lacks
};

}  // namespace tunescope::tuner
