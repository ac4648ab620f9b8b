// Loads a trace file into a TraceDocument on a worker thread and reports through
// signals only, so the GUI stays responsive on large traces. Only the latest request
// reports: opening another file supersedes a load in flight.
#pragma once

#include <QObject>
#include <QString>
#include <QThread>
#include <atomic>

#include "models/TraceDocument.h"

namespace tunescope::gui {

class TraceLoader : public QObject {
  Q_OBJECT
 public:
  explicit TraceLoader(QObject* parent = nullptr);
  // Waits for a load in flight: its worker refers to this object.
  ~TraceLoader() override;

  void load(const QString& filePath);
  bool isLoading() const;

 signals:
  void started(const QString& filePath);
  void loaded(tunescope::gui::TraceDocumentPtr document, qint64 elapsedMs);
  // The message names the file and the problem.
  void failed(const QString& filePath, const QString& message);

 private:
  QList<QThread*> workers_;
  std::atomic<quint64> generation_{0};
};

}  // namespace tunescope::gui

Q_DECLARE_METATYPE(tunescope::gui::TraceDocumentPtr)
