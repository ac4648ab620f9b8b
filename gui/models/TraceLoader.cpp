// Worker-thread trace loading with queued signal delivery to the loader's thread.
#include "models/TraceLoader.h"

#include <QElapsedTimer>
#include <QFileInfo>
#include <exception>

namespace tunescope::gui {

TraceLoader::TraceLoader(QObject* parent) : QObject(parent) {
  qRegisterMetaType<TraceDocumentPtr>();
}

TraceLoader::~TraceLoader() {
  for (QThread* t : workers_) {
    t->wait();
    delete t;
  }
}

bool TraceLoader::isLoading() const {
  for (QThread* t : workers_)
    if (t->isRunning()) return true;
  return false;
}

void TraceLoader::load(const QString& filePath) {
  const quint64 generation = ++generation_;
  emit started(filePath);
  QThread* worker = QThread::create([this, filePath, generation] {
    QElapsedTimer timer;
    timer.start();
    TraceDocumentPtr doc;
    QString error;
    try {
      doc = TraceDocument::load(filePath);
    } catch (const std::exception& e) {
      error = QString::fromUtf8(e.what());
    } catch (...) {
      error = QStringLiteral("unknown error");
    }
    const qint64 ms = timer.elapsed();
    // Deliver on the loader's thread; a superseded load stays silent.
    QMetaObject::invokeMethod(
        this,
        [this, filePath, generation, doc, error, ms] {
          if (generation != generation_) return;
          if (doc) {
            emit loaded(doc, ms);
          } else {
            // The reader's message normally names the file; make sure it always does.
            const QString name = QFileInfo(filePath).fileName();
            emit failed(filePath, error.contains(name) ? error : QStringLiteral("%1: %2").arg(filePath, error));
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
