// TraceLoader loads on a worker thread and reports through signals: loaded(doc) for a
// good trace; failed(message naming the file) for missing, malformed, truncated or
// foreign files; a superseded load stays silent.
#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QThread>
#include <QtTest>

#include "GuiTestTraces.h"
#include "models/TraceLoader.h"

using namespace tunescope;
using namespace tunescope::gui;

class TraceLoaderTest : public QObject {
  Q_OBJECT
 private:
  static QString writeText(const QTemporaryDir& dir, const QString& name, const QByteArray& text) {
    const QString path = dir.filePath(name);
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly)) qFatal("cannot write %s", qPrintable(path));
    f.write(text);
    return path;
  }

 private slots:
  void loadsOnAWorkerThread() {
    QTemporaryDir dir;
    const QString path = test_support::writeTrace(dir, test_support::smallTrace());
    TraceLoader loader;
    QSignalSpy loaded(&loader, &TraceLoader::loaded);
    QSignalSpy failed(&loader, &TraceLoader::failed);
    loader.load(path);
    QVERIFY(loaded.wait(10'000));
    QCOMPARE(failed.count(), 0);
    const auto doc = loaded.at(0).at(0).value<TraceDocumentPtr>();
    QVERIFY(doc);
    QCOMPARE(doc->filePath(), path);
    QCOMPARE(doc->trace().activities.size(), size_t(8));
    QCOMPARE(doc->lanes().size(), size_t(3));
  }

  void badFilesFailWithTheFileName_data() {
    QTest::addColumn<QString>("name");
    QTest::addColumn<QByteArray>("content");
    QTest::newRow("malformed") << "malformed.json"
                               << QByteArray("{\"traceEvents\": [ {\"ph\": \"X\", oops");
    QTest::newRow("truncated")
        << "truncated.json"
        << QByteArray(
               "{\"traceEvents\": [{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"ts\":1,");
    QTest::newRow("foreign json") << "foreign.json" << QByteArray("{\"hello\": \"world\"}");
    QTest::newRow("not json at all") << "image.json" << QByteArray("\x89PNG\r\n\x1a\n binary");
    QTest::newRow("empty") << "empty.json" << QByteArray();
  }
  void badFilesFailWithTheFileName() {
    QFETCH(QString, name);
    QFETCH(QByteArray, content);
    QTemporaryDir dir;
    const QString path = writeText(dir, name, content);
    TraceLoader loader;
    QSignalSpy loaded(&loader, &TraceLoader::loaded);
    QSignalSpy failed(&loader, &TraceLoader::failed);
    loader.load(path);
    QVERIFY(failed.wait(10'000));
    QCOMPARE(loaded.count(), 0);
    QCOMPARE(failed.at(0).at(0).toString(), path);
    const QString message = failed.at(0).at(1).toString();
    QVERIFY2(message.contains(name), qPrintable(message));
  }

  void traceBeyondTheLimitIsRefusedWithAMessage() {
    QTemporaryDir dir;
    const QString path =
        test_support::writeTrace(dir, test_support::smallTrace());  // 8 activities, 4 ranges
    TraceLoader loader;
    QCOMPARE(loader.maxRecords(), TraceLoader::kDefaultMaxRecords);
    loader.setMaxRecords(10);
    QSignalSpy loaded(&loader, &TraceLoader::loaded);
    QSignalSpy failed(&loader, &TraceLoader::failed);
    loader.load(path);
    QVERIFY(failed.wait(10'000));
    QCOMPARE(loaded.count(), 0);
    const QString message = failed.at(0).at(1).toString();
    QVERIFY2(message.contains(QStringLiteral("small.json")) &&
                 message.contains(QStringLiteral("more than 10")),
             qPrintable(message));
    // At the limit it opens.
    loader.setMaxRecords(12);
    loader.load(path);
    QVERIFY(loaded.wait(10'000));
    QCOMPARE(loaded.count(), 1);
  }

  void missingFileFails() {
    TraceLoader loader;
    QSignalSpy failed(&loader, &TraceLoader::failed);
    loader.load(QStringLiteral("/nonexistent/dir/trace.json"));
    QVERIFY(failed.wait(10'000));
    QVERIFY(failed.at(0).at(1).toString().contains(QStringLiteral("trace.json")));
  }

  void latestRequestWins() {
    QTemporaryDir dir;
    const QString good = test_support::writeTrace(dir, test_support::smallTrace());
    TraceLoader loader;
    QSignalSpy loaded(&loader, &TraceLoader::loaded);
    QSignalSpy failed(&loader, &TraceLoader::failed);
    loader.load(QStringLiteral("/nonexistent/first.json"));
    loader.load(good);
    QVERIFY(loaded.wait(10'000));
    QTest::qWait(200);  // let a stale failure arrive if it were going to
    QCOMPARE(failed.count(), 0);
    QCOMPARE(loaded.count(), 1);
  }

  void reportsProgressUpToTheWholeFile() {
    QTemporaryDir dir;
    const QString path = test_support::writeTrace(dir, test_support::manyEventsTrace(40'000, 4),
                                                  QStringLiteral("big.json"));
    TraceLoader loader;
    QSignalSpy progress(&loader, &TraceLoader::progress);
    QSignalSpy loaded(&loader, &TraceLoader::loaded);
    loader.load(path);
    QVERIFY(loaded.wait(20'000));
    QVERIFY(progress.count() >= 2);  // the file spans several 1 MiB reads
    int last = -1;
    for (const QList<QVariant>& args : progress) {
      QVERIFY(args.at(0).toInt() > last);
      last = args.at(0).toInt();
    }
    QCOMPARE(last, 100);
    QVERIFY(!loader.isLoading());
  }

  void cancelStopsTheReadAndReportsNothingElse() {
    QTemporaryDir dir;
    const QString path = test_support::writeTrace(dir, test_support::manyEventsTrace(300'000, 4),
                                                  QStringLiteral("big.json"));
    TraceLoader loader;
    QSignalSpy loaded(&loader, &TraceLoader::loaded);
    QSignalSpy failed(&loader, &TraceLoader::failed);
    QSignalSpy cancelled(&loader, &TraceLoader::cancelled);
    loader.load(path);
    QVERIFY(loader.isLoading());
    loader.cancel();
    QCOMPARE(cancelled.count(), 1);
    QCOMPARE(cancelled.at(0).at(0).toString(), path);
    QVERIFY(!loader.isLoading());
    // The worker stops on its own (the reader polls the flag) ...
    QTRY_VERIFY_WITH_TIMEOUT(!loader.hasRunningWorkers(), 20'000);
    QTest::qWait(100);  // ... and a late result would have been queued by now
    QCOMPARE(loaded.count(), 0);
    QCOMPARE(failed.count(), 0);
    loader.cancel();  // nothing in flight: no second report
    QCOMPARE(cancelled.count(), 1);
  }

  void destroyingWhileLoadingIsSafe() {
    QTemporaryDir dir;
    const QString good = test_support::writeTrace(dir, test_support::smallTrace());
    auto* loader = new TraceLoader;
    loader->load(good);
    delete loader;  // waits for the worker; its queued result is dropped
    QTest::qWait(50);
  }
};

QTEST_GUILESS_MAIN(TraceLoaderTest)
#include "tst_traceloader.moc"
