// The Candidates view's data: the trials of a tunescope results DB (read through
// core/tuner's ResultsDb, never SQL of our own), one row per config, ranked as the CLI
// ranks them (core/tuner's ranking, baseline rule and config labels), with the vs-baseline ratio
// and the Chrome trace each trial maps to.
#pragma once

#include <QAbstractTableModel>
#include <QString>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/tuner/StoredTune.h"  // StoredRunConfig and the RunConfig it parses

namespace tunescope::gui {

struct CandidateRow {
  int64_t trialId = 0;  // the latest DB row of this config (a re-measurement wins)
  int64_t problemId = 0;
  QString configJson;  // exactly as stored: traces carry the same text in metadata.config
  QString configKey;   // configKey(configJson): equal for configs that run the same
  QString label;       // "nchw conv=gemm threads=2 streams=2", as RunConfig::label()
  QString status;      // ok, invalid, failed, skipped
  QString reason;
  double medianEps = 0;  // examples/s (ok trials)
  double spread = 0;     // (p90 - p10) / median of the step times
  double medianStepMs = 0;
  int64_t steps = 0;        // timed steps behind the figures (halving's early rounds time fewer)
  bool remeasured = false;  // the figures are from the final interleaved rounds, still racing
  tuner::StopRule stop = tuner::StopRule::none;  // why its timing stopped (the ranking's tiers)
  int measurements = 1;  // DB rows of this config (2+: re-measured interleaved, or several tunes)
  std::optional<RunConfig> config;  // the parsed config (none: a row whose text does not parse)
  bool baseline =
      false;  // the tune's yardstick, by tuner::stored_baseline (the backend's default conv)
  bool best = false;  // the fastest ok trial, or the config of a mapped best.json
  QString tracePath;  // empty when no trace is known for this trial
  bool ok() const { return status == QLatin1String("ok"); }
};

struct ProblemInfo {
  int64_t id = 0;
  QString label;  // "resnet18-small · batch 32"
};

class CandidatesModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column {
    RankColumn,
    ConfigColumn,
    StatusColumn,
    ReasonColumn,
    EpsColumn,
    SpreadColumn,
    RatioColumn,
    TraceColumn,
    ColumnCount
  };
  static constexpr int SortRole = Qt::UserRole + 1;

  using QAbstractTableModel::QAbstractTableModel;

  // Reads `dbPath`; on failure keeps the previous contents and sets *error to a message
  // naming the file (missing, empty, not SQLite, another application's database...).
  // A missing or empty file is refused here because ResultsDb would create our schema
  // in it, and a viewer must not write to what it was asked to show.
  bool load(const QString& dbPath, QString* error);
  // Picks the problem whose trials are shown (the first one after load).
  void setProblem(int64_t problemId);

  // Maps the Chrome traces in `dir` (best.json[.gz] and baseline.json[.gz] only, with
  // onlyTuneNames; else every file profiler::sniff_file finds a Chrome trace, whatever
  // its name) to trials by the config JSON each trace carries in its metadata.
  // Returns how many trials got a trace. Files that are not traces are skipped.
  int mapTraceDirectory(const QString& dir, bool onlyTuneNames = false);
  // Maps one trace file to `row` (the trace the user picked for it).
  void setTracePath(int row, const QString& path);
  // The trial whose config runs as the trace's metadata.config, or -1.
  int rowOfConfig(const QString& configJson) const;

  const QString& dbPath() const { return dbPath_; }
  const std::vector<ProblemInfo>& problems() const { return problems_; }
  int64_t problem() const { return problem_; }
  // The shown rows, ranked: ok as the tuner ranks them (tuner::ranking_led_by the best),
  // then invalid, failed, skipped in measurement order.
  const std::vector<CandidateRow>& rows() const { return rows_; }
  const CandidateRow* baselineRow() const;
  const CandidateRow* bestRow() const;
  // medianEps / baseline's medianEps; 0 without a baseline or for non-ok trials.
  double ratioToBaseline(const CandidateRow& row) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

 signals:
  void tracesMapped();

 private:
  void rebuildRows();

  QString dbPath_;
  std::vector<CandidateRow> all_;  // every config of every problem, deduplicated
  std::vector<ProblemInfo> problems_;
  int64_t problem_ = 0;
  std::vector<CandidateRow> rows_;
  QString
      bestConfig_;  // configKey of a mapped best.json's metadata.config: the tune's declared winner
};

// StoredRunConfig::label() of the stored JSON (RunConfig::label() plus the keys of a
// newer tunescope, so configs with different labels never share a row); the raw text
// when it does not parse.
QString configLabel(const QString& configJson);
// StoredRunConfig::key(): the identity of a config, equal for the same config written by
// different tunescope versions; the raw text when it does not parse.
QString configKey(const QString& configJson);

}  // namespace tunescope::gui
