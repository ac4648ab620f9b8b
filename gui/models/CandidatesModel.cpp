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
#include <set>
#include <nlohmann/json.hpp>

#include "core/tuner/ResultsDb.h"
#include "profiler/ChromeTraceReader.h"

namespace tunescope::gui {

namespace {

using nlohmann::json;

json parseConfig(const QString& text) {
  // Configs in the DB were written by to_json_text; a hand-edited one may not parse,
  // and then the row shows its raw text rather than failing the whole DB.
  return json::parse(text.toStdString(), nullptr, /*allow_exceptions=*/false);
}

template <typename T>
T value(const json& j, const char* key, T fallback) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return fallback;
  try {
    return it->get<T>();
  } catch (const json::exception&) {
    return fallback;
  }
}

// The reference config the tuner measures first (Tuner.cpp: "the baseline goes first").
bool isBaselineConfig(const json& c) {
  if (!c.is_object()) return false;
  const json conv = c.value("conv", json::object());
  const bool noOverrides = !conv.contains("per_layer") || conv["per_layer"].empty();
  return value<std::string>(c, "layout", "") == "nchw" && value<std::string>(conv, "default", "") == "direct" &&
         noOverrides && value<int>(c, "streams", 1) == 1 && value<int>(c, "replicas", 1) == 1 &&
         value<int>(c, "micro_batches", 1) == 1 && !value<bool>(c, "async_update", false);
}

int statusOrder(const QString& s) {
  // TrialStatus order: ok, invalid, failed, skipped (as the CLI's ranking).
  static const QStringList order{QStringLiteral("ok"), QStringLiteral("invalid"), QStringLiteral("failed"),
                                 QStringLiteral("skipped")};
  const int i = static_cast<int>(order.indexOf(s));
  return i < 0 ? static_cast<int>(order.size()) : i;
}

bool isTraceName(const QString& name) {
  return name.endsWith(QLatin1String(".json")) || name.endsWith(QLatin1String(".json.gz"));
}

// Keys of tunescope.config/1 that configLabel() spells out or that are not knobs.
const std::set<std::string> kKnownKeys{"schema", "model", "batch", "layout", "conv", "threads", "streams",
                                       "replicas", "micro_batches", "async_update", "threads_per_lane", "fft_workspace",
                                       "measured"};

json canonicalConfig(json c) {
  c.erase("schema");
  c.erase("measured");  // informational figures of a written tuned config
  // RunConfig's defaults (core/engine/RunConfig.h, Concurrency.h).
  for (const auto& [key, fallback] : {std::pair<const char*, json>{"threads", 1}, {"streams", 1}, {"replicas", 1},
                                      {"micro_batches", 1}, {"async_update", false}, {"threads_per_lane", 0},
                                      {"fft_workspace", "reuse"}})
    if (!c.contains(key) || c[key].is_null()) c[key] = fallback;
  if (c.contains("conv") && c["conv"].is_object() && !c["conv"].contains("per_layer"))
    c["conv"]["per_layer"] = json::object();
  return c;
}

}  // namespace

QString configKey(const QString& configJson) {
  const json c = parseConfig(configJson);
  // Not ours to interpret: the text itself is the identity.
  if (!c.is_object()) return configJson;
  return QString::fromStdString(canonicalConfig(c).dump());
}

QString configLabel(const QString& configJson) {
  const json c = parseConfig(configJson);
  if (!c.is_object()) return configJson.simplified().left(80);
  const json conv = c.value("conv", json::object());
  std::string convText = value<std::string>(conv, "default", "?");
  if (conv.contains("per_layer") && conv["per_layer"].is_object())
    for (const auto& [layer, algorithm] : conv["per_layer"].items())
      convText += "," + layer + "=" + (algorithm.is_string() ? algorithm.get<std::string>() : algorithm.dump());
  QString out = QStringLiteral("%1 conv=%2 threads=%3")
                    .arg(QString::fromStdString(value<std::string>(c, "layout", "?")), QString::fromStdString(convText))
                    .arg(value<int>(c, "threads", 1));
  // The concurrency knobs only when not the default, as Concurrency::label().
  if (const int s = value<int>(c, "streams", 1); s != 1) out += QStringLiteral(" streams=%1").arg(s);
  if (value<bool>(c, "async_update", false)) out += QStringLiteral(" async");
  if (const int r = value<int>(c, "replicas", 1); r != 1) out += QStringLiteral(" replicas=%1").arg(r);
  if (const int m = value<int>(c, "micro_batches", 1); m != 1) out += QStringLiteral(" micro=%1").arg(m);
  if (const int t = value<int>(c, "threads_per_lane", 0); t != 0) out += QStringLiteral(" threads/lane=%1").arg(t);
  // The FFT workspace policy only when not the default, as RunConfig::label().
  if (const std::string f = value<std::string>(c, "fft_workspace", "reuse"); f != "reuse")
    out += QStringLiteral(" fft=%1").arg(QString::fromStdString(f));
  for (const auto& [key, v] : c.items())  // json objects iterate in key order
    if (!kKnownKeys.count(key))
      out += QStringLiteral(" %1=%2").arg(QString::fromStdString(key),
                                           QString::fromStdString(v.is_string() ? v.get<std::string>() : v.dump()));
  return out;
}

bool CandidatesModel::load(const QString& dbPath, QString* error) {
  const QFileInfo info(dbPath);
  auto refuse = [&](const QString& why) {
    if (error) *error = QStringLiteral("%1: %2").arg(dbPath, why);
    return false;
  };
  if (!info.exists()) return refuse(QStringLiteral("no such file"));
  if (!info.isFile()) return refuse(QStringLiteral("not a file"));
  if (info.size() == 0) return refuse(QStringLiteral("empty file, not a tunescope results DB"));

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
  std::map<int64_t, int64_t> baselineTrial;  // problem -> id of its first baseline-config trial
  for (const tuner::TrialRecord& r : records) {  // insertion order
    CandidateRow row;
    row.trialId = r.id;
    row.problemId = r.problem_id;
    row.configJson = QString::fromStdString(r.config_json);
    row.configKey = configKey(row.configJson);
    row.label = configLabel(row.configJson);
    row.status = QString::fromStdString(tuner::to_string(r.status));
    row.reason = QString::fromStdString(r.reason);
    row.medianEps = r.figures.median_eps;
    row.spread = r.figures.spread;
    row.medianStepMs = r.figures.median_step_ms;
    const json config = parseConfig(row.configJson);
    if (!problems.count(r.problem_id))
      problems[r.problem_id] = {r.problem_id, QStringLiteral("%1 · batch %2")
                                                  .arg(QString::fromStdString(value<std::string>(config, "model", "?")))
                                                  .arg(value<int64_t>(config, "batch", 0))};
    if (isBaselineConfig(config) && !baselineTrial.count(r.problem_id)) baselineTrial[r.problem_id] = r.id;

    const auto key = std::pair(r.problem_id, row.configKey);
    if (auto it = byConfig.find(key); it != byConfig.end()) {
      // The same config again: the interleaved re-measurement of the top two, or a later
      // tune. The latest ok measurement is the final word; a failed re-measurement does
      // not erase an earlier success (the tuner then keeps the sweep's figures too).
      CandidateRow& kept = all[it->second];
      const int n = kept.measurements + 1;
      if (row.ok() || !kept.ok()) kept = row;
      kept.measurements = n;
      continue;
    }
    byConfig.emplace(key, all.size());
    all.push_back(std::move(row));
  }
  // Only the first baseline-shaped config of a problem is the yardstick: a tune over
  // several thread counts also measures nchw + direct with 2 threads, which is just
  // another candidate. Compared by config, since a re-measurement may have superseded
  // the baseline's first row.
  std::map<int64_t, QString> baselineConfig;
  for (const tuner::TrialRecord& r : records)
    if (baselineTrial.count(r.problem_id) && baselineTrial[r.problem_id] == r.id)
      baselineConfig[r.problem_id] = configKey(QString::fromStdString(r.config_json));
  for (CandidateRow& row : all) {
    const auto it = baselineConfig.find(row.problemId);
    row.baseline = it != baselineConfig.end() && it->second == row.configKey;
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
  const QDir dir = info.absoluteDir();
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
  rows_.clear();
  for (const CandidateRow& r : all_)
    if (r.problemId == problem_) rows_.push_back(r);
  // The declared winner (a mapped best.json) leads; else the fastest ok trial.
  std::optional<size_t> best;
  for (size_t i = 0; i < rows_.size(); ++i) {
    rows_[i].best = false;
    if (!rows_[i].ok()) continue;
    if (!bestConfig_.isEmpty() && rows_[i].configKey == bestConfig_) {
      best = i;
      break;
    }
    if (!best || rows_[i].medianEps > rows_[*best].medianEps) best = i;
  }
  if (best) rows_[*best].best = true;
  std::stable_sort(rows_.begin(), rows_.end(), [](const CandidateRow& a, const CandidateRow& b) {
    if (a.best != b.best) return a.best;
    if (a.status != b.status) return statusOrder(a.status) < statusOrder(b.status);
    return a.ok() && a.medianEps > b.medianEps;
  });
}

int CandidatesModel::mapTraceDirectory(const QString& dirPath, bool onlyTuneNames) {
  const QDir dir(dirPath);
  // best.json last: when the baseline wins, both files hold its config, and its row
  // should name the winner's trace.
  QStringList names = onlyTuneNames ? QStringList{QStringLiteral("baseline.json"), QStringLiteral("baseline.json.gz"),
                                                  QStringLiteral("best.json"), QStringLiteral("best.json.gz")}
                                    : dir.entryList(QDir::Files, QDir::Name);
  int mapped = 0;
  for (const QString& name : names) {
    if (!isTraceName(name) || !dir.exists(name)) continue;
    const QString path = dir.absoluteFilePath(name);
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
    if (r.problemId == rows_[static_cast<size_t>(row)].problemId && r.configKey == rows_[static_cast<size_t>(row)].configKey)
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

int CandidatesModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

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
        return r.ok() && r.measurements > 1 ? tr("measured %1×, latest shown").arg(r.measurements) : r.reason;
      case EpsColumn: return r.ok() ? QStringLiteral("%L1").arg(r.medianEps, 0, 'f', 1) : QStringLiteral("–");
      case SpreadColumn: return r.ok() ? QStringLiteral("%1%").arg(r.spread * 100, 0, 'f', 1) : QStringLiteral("–");
      case RatioColumn: return ratio > 0 ? QStringLiteral("%1×").arg(ratio, 0, 'f', 2) : QStringLiteral("–");
      case TraceColumn: return r.tracePath.isEmpty() ? QStringLiteral("–") : QFileInfo(r.tracePath).fileName();
      default: return {};
    }
  }
  if (role == Qt::ToolTipRole) {
    if (index.column() == ConfigColumn) return r.configJson;
    if (index.column() == ReasonColumn) return r.reason;
    if (index.column() == TraceColumn)
      return r.tracePath.isEmpty() ? tr("No trace known: double-click to pick one") : r.tracePath;
  }
  if (role == Qt::TextAlignmentRole && (index.column() == EpsColumn || index.column() == SpreadColumn ||
                                        index.column() == RatioColumn || index.column() == RankColumn))
    return int(Qt::AlignRight | Qt::AlignVCenter);
  if (role == Qt::ForegroundRole && index.column() == StatusColumn && !r.ok())
    return QBrush(r.status == QLatin1String("skipped") ? QColor(0x80, 0x80, 0x80) : QColor(0xc0, 0x39, 0x2b));
  return {};
}

QVariant CandidatesModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return QAbstractTableModel::headerData(section, orientation, role);
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
