// Worker-thread trace loading with queued signal delivery to the loader's thread; each
// load has its own cancellation flag, which the profiler's reader polls.
#include "models/TraceLoader.h"

#include <QElapsedTimer>
#include <QFileInfo>
#include <algorithm>
#include <exception>

namespace tunescope::gui {

TraceLoader::TraceLoader(QObject* parent) : QObject(parent) {
  qRegisterMetaType<TraceDocumentPtr>();
}

TraceLoader::~TraceLoader() {
  if (cancel_) *cancel_ = true;
  for (QThread* t : workers_) {
    t->wait();
    delete t;
  }
}

bool TraceLoader::hasRunningWorkers() const {
  for (QThread* t : workers_)
    if (t->isRunning()) return true;
  return false;
}

void TraceLoader::cancel() {
  if (!inFlight_) return;
  *cancel_ = true;
  ++generation_;  // its result, if it still comes, is stale
  inFlight_ = false;
  emit cancelled(filePath_);
}

void TraceLoader::load(const QString& filePath) {
  if (cancel_) *cancel_ = true;  // a superseded load stops reading
  cancel_ = std::make_shared<std::atomic<bool>>(false);
  filePath_ = filePath;
  inFlight_ = true;
  const quint64 generation = ++generation_;
  emit started(filePath);
  QThread* worker =
      QThread::create([this, filePath, generation, cancel = cancel_, maxRecords = maxRecords_] {
        QElapsedTimer timer;
        timer.start();
        profiler::TraceReadOptions options;
        options.cancel = cancel.get();
        options.max_records = maxRecords;
        int lastPercent = -1;
        options.progress = [&](uint64_t done, uint64_t total) {
          const int percent =
              total ? static_cast<int>(std::min<uint64_t>(done * 100 / total, 100)) : 0;
          if (percent == lastPercent) return;
          lastPercent = percent;
          QMetaObject::invokeMethod(
              this,
              [this, generation, percent] {
                if (generation == generation_) emit progress(percent);
              },
              Qt::QueuedConnection);
        };
        TraceDocumentPtr doc;
        QString error;
        bool wasCancelled = false;
        try {
          doc = TraceDocument::load(filePath, options);
        } catch (const profiler::TraceReadCancelled&) {
          wasCancelled = true;
        } catch (const std::exception& e) {
          error = QString::fromUtf8(e.what());
        } catch (...) {
          error = QStringLiteral("unknown error");
        }
        if (wasCancelled) return;  // cancel() has reported it
        const qint64 ms = timer.elapsed();
        // Deliver on the loader's thread; a superseded or cancelled load stays silent.
        QMetaObject::invokeMethod(
            this,
            [this, filePath, generation, doc, error, ms] {
              if (generation != generation_) return;
              inFlight_ = false;
              if (doc) {
                emit loaded(doc, ms);
              } else {
                // The reader's message normally names the file; make sure it always does.
                const QString name = QFileInfo(filePath).fileName();
                emit failed(filePath, error.contains(name)
                                          ? error
                                          : QStringLiteral("%1: %2").arg(filePath, error));
              }
            },
            Qt::QueuedConnection);
      });
  connect(worker, &QThread::finished, this, [this, worker] {
    workers_.removeOne(worker);
    worker->deleteLater();
  });
  workers_.append(worker);
  worker->start();
}

}  // namespace tunescope::gui
