// Reads the results DB through tuner::ResultsDb, deduplicates and ranks the trials,
// and maps tune traces to trials by the config JSON both of them carry.
#include "models/CandidatesModel.h"

#include <QBrush>
#include <QColor>
#include <QDir>
#include <QFileInfo>
#include <algorithm>
#include <cmath>
#include <exception>
#include <map>
#include <optional>

#include "core/tuner/Ranking.h"
#include "core/tuner/ResultsDb.h"
#include "core/tuner/StoredTune.h"
#include "profiler/ChromeTraceReader.h"
#include "profiler/FileKind.h"

namespace tunescope::gui {

namespace {

// A stored config as the view shows it: core's reader for stored configs (no kernels
// are registered in the GUI) gives its label and identity (StoredRunConfig). A
// hand-edited row that does not parse shows its raw text, its identity, rather than
// failing the whole DB.
struct DescribedConfig {
  QString key;
  QString label;
  std::optional<RunConfig> config;
};

DescribedConfig describe(const QString& text) {
  try {
    const StoredRunConfig stored =
        stored_run_config_from_json_text(text.toStdString(), "results DB");
    return {QString::fromStdString(stored.key()), QString::fromStdString(stored.label()),
            stored.config};
  } catch (const std::exception&) {
    return {text, text.simplified().left(80), std::nullopt};
  }
}

int statusOrder(const QString& s) {
  // TrialStatus order: ok, invalid, failed, skipped (as the CLI's ranking).
  static const QStringList order{QStringLiteral("ok"), QStringLiteral("invalid"),
                                 QStringLiteral("failed"), QStringLiteral("skipped")};
  const int i = static_cast<int>(order.indexOf(s));
  return i < 0 ? static_cast<int>(order.size()) : i;
}

bool isChromeTrace(const QString& path) {
  const profiler::FileKind kind = profiler::sniff_file(path.toStdString());
  return kind == profiler::FileKind::trace_json || kind == profiler::FileKind::trace_json_gz;
}

}  // namespace

QString configKey(const QString& configJson) { return describe(configJson).key; }

QString configLabel(const QString& configJson) { return describe(configJson).label; }

bool CandidatesModel::load(const QString& dbPath, QString* error) {
  auto refuse = [&](const QString& why) {
    if (error) *error = QStringLiteral("%1: %2").arg(dbPath, why);
    return false;
  };
  switch (profiler::sniff_file(dbPath.toStdString())) {
    case profiler::FileKind::missing: return refuse(QStringLiteral("no such file"));
    case profiler::FileKind::directory: return refuse(QStringLiteral("not a file"));
    case profiler::FileKind::empty:
      return refuse(QStringLiteral("empty file, not a tunescope results DB"));
    default: break;  // ResultsDb says what is wrong with any other file
  }

  std::vector<tuner::TrialRecord> records;
  try {
    // Read-only: viewing changes nothing (no migration) and leaves no WAL files behind.
    const tuner::ResultsDb db(dbPath.toStdString(), tuner::ResultsDb::Access::read_only);
    records = db.trials();
  } catch (const std::exception& e) {
    // ResultsDb's message already names the file.
    if (error) *error = QString::fromStdString(e.what());
    return false;
  }

  std::vector<CandidateRow> all;
  std::map<std::pair<int64_t, QString>, size_t> byConfig;
  std::map<int64_t, ProblemInfo> problems;
  for (const tuner::TrialRecord& r : records) {  // insertion order
    CandidateRow row;
    row.trialId = r.id;
    row.problemId = r.problem_id;
    row.configJson = QString::fromStdString(r.config_json);
    DescribedConfig described = describe(row.configJson);
    row.configKey = std::move(described.key);
    row.label = std::move(described.label);
    row.config = std::move(described.config);
    row.status = QString::fromStdString(tuner::to_string(r.status));
    row.reason = QString::fromStdString(r.reason);
    row.medianEps = r.figures.median_eps;
    row.spread = r.figures.spread;
    row.medianStepMs = r.figures.median_step_ms;
    row.steps = r.figures.steps;
    row.stop = r.figures.stop;
    row.remeasured = tuner::is_remeasurement(r);
    if (!problems.count(r.problem_id))
      problems[r.problem_id] = {
          r.problem_id, QStringLiteral("%1 · batch %2")
                            .arg(QString::fromStdString(row.config ? row.config->model : "?"))
                            .arg(row.config ? row.config->batch : 0)};

    const auto key = std::pair(r.problem_id, row.configKey);
    if (auto it = byConfig.find(key); it != byConfig.end()) {
      // The same config again: the interleaved re-measurement of the top two, or a later
      // tune. Which row shows is `report`'s rule (tuner::later_row_replaces): a failed
      // re-measurement or a skipped row does not hide a measured one.
      CandidateRow& kept = all[it->second];
      const int n = kept.measurements + 1;
      if (tuner::later_row_replaces(r)) kept = row;
      kept.measurements = n;
      continue;
    }
    byConfig.emplace(key, all.size());
    all.push_back(std::move(row));
  }
  // The yardstick of each problem by the tuner's own rule (tuner::stored_baseline): the
  // first recorded config with the reference's shape, whatever the backend's default
  // conv algorithm is (direct on cpu, cuDNN's implicit GEMM on cuda). A tune over
  // several thread counts also measures nchw + direct with 2 threads later: just
  // another candidate. all holds the configs in the order they were first recorded.
  for (const auto& [problemId, info] : problems) {
    std::vector<RunConfig> configs;
    std::vector<size_t> rowOf;
    for (size_t i = 0; i < all.size(); ++i)
      if (all[i].problemId == problemId && all[i].config) {
        configs.push_back(*all[i].config);
        rowOf.push_back(i);
      }
    if (const auto baseline = tuner::stored_baseline(configs))
      all[rowOf[*baseline]].baseline = true;
  }

  beginResetModel();
  dbPath_ = dbPath;
  all_ = std::move(all);
  problems_.clear();
  for (auto& [id, p] : problems) problems_.push_back(p);
  problem_ = problems_.empty() ? 0 : problems_.front().id;
  bestConfig_.clear();
  rebuildRows();
  endResetModel();
  // The tune's --trace-dir is not recorded in the DB; a folder next to the DB (or the
  // DB's own folder) holding best.json/baseline.json is the common layout, so look there.
  const QDir dir = QFileInfo(dbPath).absoluteDir();
  mapTraceDirectory(dir.absolutePath(), /*onlyTuneNames=*/true);
  for (const QFileInfo& sub : dir.entryInfoList(QDir::Dirs | QDir::NoDotAndDotDot))
    mapTraceDirectory(sub.absoluteFilePath(), /*onlyTuneNames=*/true);
  return true;
}

void CandidatesModel::setProblem(int64_t problemId) {
  beginResetModel();
  problem_ = problemId;
  rebuildRows();
  endResetModel();
}

void CandidatesModel::rebuildRows() {
  // Copies of all_, so the mapped trace paths come along.
  std::vector<CandidateRow> shown;
  for (const CandidateRow& r : all_)
    if (r.problemId == problem_) shown.push_back(r);
  // The ok trials ranked as the tuner and `report` rank them (tuner::rank_ok_trials: the
  // final rounds' members, then the fully measured, then those cut short); the declared winner
  // (a mapped best.json) leads, else the top of that ranking.
  std::vector<tuner::TrialResult> trials(shown.size());
  for (size_t i = 0; i < shown.size(); ++i) {
    shown[i].best = false;
    if (shown[i].config) trials[i].config = *shown[i].config;
    trials[i].status = shown[i].ok() ? tuner::TrialStatus::ok : tuner::TrialStatus::failed;
    trials[i].figures.steps = shown[i].steps;
    trials[i].figures.stop = shown[i].stop;
    trials[i].reason = shown[i].reason.toStdString();
    trials[i].figures.median_eps = shown[i].medianEps;
    trials[i].remeasured = shown[i].remeasured;
  }
  std::vector<size_t> ranked = tuner::rank_ok_trials(trials);
  if (!ranked.empty()) {
    size_t best = ranked.front();
    for (size_t i : ranked)
      if (!bestConfig_.isEmpty() && shown[i].configKey == bestConfig_) best = i;
    ranked = tuner::ranking_led_by(trials, best);
    shown[best].best = true;
  }
  rows_.clear();
  for (size_t i : ranked) rows_.push_back(shown[i]);
  // Then the rest by status (invalid, failed, skipped), each in measurement order.
  std::vector<CandidateRow> rest;
  for (const CandidateRow& r : shown)
    if (!r.ok()) rest.push_back(r);
  std::stable_sort(rest.begin(), rest.end(), [](const CandidateRow& a, const CandidateRow& b) {
    return statusOrder(a.status) < statusOrder(b.status);
  });
  rows_.insert(rows_.end(), rest.begin(), rest.end());
}

int CandidatesModel::mapTraceDirectory(const QString& dirPath, bool onlyTuneNames) {
  const QDir dir(dirPath);
  // best.json last: when the baseline wins, both files hold its config, and its row
  // should name the winner's trace.
  QStringList names =
      onlyTuneNames
          ? QStringList{QStringLiteral("baseline.json"), QStringLiteral("baseline.json.gz"),
                        QStringLiteral("best.json"), QStringLiteral("best.json.gz")}
          : dir.entryList(QDir::Files, QDir::Name);
  int mapped = 0;
  for (const QString& name : names) {
    const QString path = dir.absoluteFilePath(name);
    if (!isChromeTrace(path)) continue;
    std::string config;
    try {
      config = profiler::read_chrome_trace(path.toStdString()).metadata.config;
    } catch (const std::exception&) {
      continue;  // not a trace: a folder may hold other JSON (tuned configs, reports)
    }
    if (config.empty()) continue;
    const QString key = configKey(QString::fromStdString(config));
    if (name.startsWith(QLatin1String("best.json"))) bestConfig_ = key;
    for (CandidateRow& r : all_)
      if (r.configKey == key) {
        r.tracePath = path;
        ++mapped;
      }
  }
  if (mapped > 0 || !bestConfig_.isEmpty()) {
    beginResetModel();
    rebuildRows();
    // rows_ are copies of all_, so the paths came along.
    endResetModel();
    emit tracesMapped();
  }
  return mapped;
}

void CandidatesModel::setTracePath(int row, const QString& path) {
  if (row < 0 || row >= rowCount()) return;
  for (CandidateRow& r : all_)
    if (r.problemId == rows_[static_cast<size_t>(row)].problemId &&
        r.configKey == rows_[static_cast<size_t>(row)].configKey)
      r.tracePath = path;
  rows_[static_cast<size_t>(row)].tracePath = path;
  emit dataChanged(index(row, 0), index(row, ColumnCount - 1));
  emit tracesMapped();
}

int CandidatesModel::rowOfConfig(const QString& configJson) const {
  const QString key = configKey(configJson);
  for (size_t i = 0; i < rows_.size(); ++i)
    if (rows_[i].configKey == key) return static_cast<int>(i);
  return -1;
}

const CandidateRow* CandidatesModel::baselineRow() const {
  for (const CandidateRow& r : rows_)
    if (r.baseline) return &r;
  return nullptr;
}

const CandidateRow* CandidatesModel::bestRow() const {
  for (const CandidateRow& r : rows_)
    if (r.best) return &r;
  return nullptr;
}

double CandidatesModel::ratioToBaseline(const CandidateRow& row) const {
  const CandidateRow* base = baselineRow();
  if (!base || !base->ok() || base->medianEps <= 0 || !row.ok()) return 0;
  return row.medianEps / base->medianEps;
}

int CandidatesModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int CandidatesModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : ColumnCount;
}

QVariant CandidatesModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount()) return {};
  const CandidateRow& r = rows_[static_cast<size_t>(index.row())];
  const double ratio = ratioToBaseline(r);
  if (role == SortRole) {
    switch (index.column()) {
      case RankColumn: return index.row() + 1;
      case EpsColumn: return r.medianEps;
      case SpreadColumn: return r.spread;
      case RatioColumn: return ratio;
      default: break;
    }
    role = Qt::DisplayRole;
  }
  if (role == Qt::DisplayRole) {
    switch (index.column()) {
      case RankColumn: return index.row() + 1;
      case ConfigColumn:
        // The tie-break may crown the baseline itself: then it is both.
        return r.label + (r.best && r.baseline ? tr("  (best, baseline)")
                          : r.best             ? tr("  (best)")
                          : r.baseline         ? tr("  (baseline)")
                                               : QString());
      case StatusColumn: return r.status;
      case ReasonColumn:
        return r.ok() && r.measurements > 1 ? tr("measured %1×, latest shown").arg(r.measurements)
                                            : r.reason;
      case EpsColumn:
        return r.ok() ? QStringLiteral("%L1").arg(r.medianEps, 0, 'f', 1) : QStringLiteral("–");
      case SpreadColumn:
        return r.ok() ? QStringLiteral("%1%").arg(r.spread * 100, 0, 'f', 1) : QStringLiteral("–");
      case RatioColumn:
        return ratio > 0 ? QStringLiteral("%1×").arg(ratio, 0, 'f', 2) : QStringLiteral("–");
      case TraceColumn:
        return r.tracePath.isEmpty() ? QStringLiteral("–") : QFileInfo(r.tracePath).fileName();
      default: return {};
    }
  }
  if (role == Qt::ToolTipRole) {
    if (index.column() == ConfigColumn) return r.configJson;
    if (index.column() == ReasonColumn) return r.reason;
    if (index.column() == TraceColumn)
      return r.tracePath.isEmpty() ? tr("No trace known: double-click to pick one") : r.tracePath;
  }
  if (role == Qt::TextAlignmentRole &&
      (index.column() == EpsColumn || index.column() == SpreadColumn ||
       index.column() == RatioColumn || index.column() == RankColumn))
    return int(Qt::AlignRight | Qt::AlignVCenter);
  if (role == Qt::ForegroundRole && index.column() == StatusColumn && !r.ok())
    return QBrush(r.status == QLatin1String("skipped") ? QColor(0x80, 0x80, 0x80)
                                                       : QColor(0xc0, 0x39, 0x2b));
  return {};
}

QVariant CandidatesModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
    return QAbstractTableModel::headerData(section, orientation, role);
  switch (section) {
    case RankColumn: return tr("#");
    case ConfigColumn: return tr("Config");
    case StatusColumn: return tr("Status");
    case ReasonColumn: return tr("Reason");
    case EpsColumn: return tr("Median ex/s");
    case SpreadColumn: return tr("Spread");
    case RatioColumn: return tr("vs baseline");
    case TraceColumn: return tr("Trace");
    default: return {};
  }
}

}  // namespace tunescope::gui
