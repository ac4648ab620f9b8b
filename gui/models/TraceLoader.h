// Loads a trace file into a TraceDocument on a worker thread and reports through
// signals only, so the GUI stays responsive on large traces. Only the latest request
// reports: opening another file cancels a load in flight, and cancel() stops it.
#pragma once

#include <QObject>
#include <QString>
#include <QThread>
#include <atomic>
#include <memory>

#include "models/TraceDocument.h"

namespace tunescope::gui {

class TraceLoader : public QObject {
  Q_OBJECT
 public:
  explicit TraceLoader(QObject* parent = nullptr);
  // Cancels a load in flight and waits for its worker, which refers to this object.
  ~TraceLoader() override;

  // The viewer's bound on a trace's activities and ranges: a bigger trace is refused,
  // with a message naming the file and the limit, as soon as the reader passes it, so
  // it never fills (or swaps) the machine. Opening peaks at about 130 bytes of
  // resident memory per record (docs/BENCHMARKS.md, "Timeline at 10M events: a smaller
  // record"), so the default is about 2.1 GB; the reader's own memory limit (half the
  // physical memory) applies too.
  static constexpr size_t kDefaultMaxRecords = 16'000'000;
  void setMaxRecords(size_t records) { maxRecords_ = records; }
  size_t maxRecords() const { return maxRecords_; }

  void load(const QString& filePath);
  // Stops the load in flight: the reader polls the flag at least every MiB of input.
  // Emits cancelled() at once; the worker's late result, if any, is dropped.
  void cancel();
  // True from load() until loaded, failed or cancelled is emitted.
  bool isLoading() const { return inFlight_; }
  // True while any worker thread still runs (a cancelled one winds down on its own).
  bool hasRunningWorkers() const;

 signals:
  void started(const QString& filePath);
  // Share of the file read, 0-100 (of the compressed bytes for gzip).
  void progress(int percent);
  void loaded(tunescope::gui::TraceDocumentPtr document, qint64 elapsedMs);
  // The message names the file and the problem.
  void failed(const QString& filePath, const QString& message);
  void cancelled(const QString& filePath);

 private:
  QList<QThread*> workers_;
  std::atomic<quint64> generation_{0};
  std::shared_ptr<std::atomic<bool>> cancel_;  // the flag of the load in flight
  QString filePath_;
  bool inFlight_ = false;
  size_t maxRecords_ = kDefaultMaxRecords;
};

}  // namespace tunescope::gui

Q_DECLARE_METATYPE(tunescope::gui::TraceDocumentPtr)
