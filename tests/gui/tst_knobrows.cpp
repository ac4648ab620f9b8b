// The knob catalog of the Run tab: `tunescope knobs --json` of the CLI built in this tree
// parses into one row per knob (the engine's and the algorithms' own), malformed text is
// refused with a message naming what is wrong, a CLI that is missing, fails or hangs is
// reported by name, and a request's knob lists become the catalog's list flags in order.
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include "models/KnobRows.h"
#include "models/TuneRequest.h"

using namespace tunescope::gui;

namespace {

QByteArray catalogJson() {
  QString error;
  const std::optional<QByteArray> json =
      readKnobCatalogJson(QStringLiteral(TUNESCOPE_CLI_PATH), &error);
  if (!json) qFatal("%s", qPrintable(error));
  return *json;
}

const KnobRow* find(const QVector<KnobRow>& rows, const QString& key) {
  for (const KnobRow& row : rows)
    if (row.key == key) return &row;
  return nullptr;
}

// The error of parsing `json`; fails the test when it parses.
QString parseError(const QByteArray& json) {
  QString error;
  if (parseKnobRows(json, &error)) return QStringLiteral("<parsed>");
  return error;
}

const char* kOneKnob =
    R"({"schema":"tunescope.knobs/1","knobs":[{"key":"fft_tile","list_flag":"--fft-tile-list",)"
    R"("tune_default":["auto"],"values":"auto, off, or a power of two","help":"FFT tiling",)"
    R"("scope":"conv_algorithm","read_by":["cpu:fft-own"]}]})";

}  // namespace

class KnobRowsTest : public QObject {
  Q_OBJECT
 private slots:
  void parsesTheCatalogOfTheCli() {
    QString error;
    const std::optional<QVector<KnobRow>> rows = parseKnobRows(catalogJson(), &error);
    QVERIFY2(rows, qPrintable(error));
    QVERIFY(rows->size() >= 6);
    QCOMPARE(rows->first().key, QStringLiteral("layout"));  // the catalog's order is kept

    const KnobRow* layout = find(*rows, QStringLiteral("layout"));
    QVERIFY(layout);
    QCOMPARE(layout->listFlag, QStringLiteral("--layout-list"));
    QCOMPARE(layout->tuneDefault, (QStringList{QStringLiteral("nchw"), QStringLiteral("nhwc")}));
    QCOMPARE(layout->values, QStringLiteral("nchw, nhwc"));
    QCOMPARE(layout->scope, QStringLiteral("run"));
    QVERIFY(layout->readBy.isEmpty());

    const KnobRow* streams = find(*rows, QStringLiteral("streams"));
    QVERIFY(streams);
    QCOMPARE(streams->listFlag, QStringLiteral("--streams-list"));
    QVERIFY(!streams->help.isEmpty());

    // Declared by algorithms in kernels/, which the GUI does not link.
    const KnobRow* fftTile = find(*rows, QStringLiteral("fft_tile"));
    QVERIFY(fftTile);
    QCOMPARE(fftTile->listFlag, QStringLiteral("--fft-tile-list"));
    QCOMPARE(fftTile->scope, QStringLiteral("conv_algorithm"));
    QCOMPARE(fftTile->tuneDefault, QStringList{QStringLiteral("auto")});
    QVERIFY(fftTile->readBy.contains(QStringLiteral("cpu:fft-own")));
    const KnobRow* winograd = find(*rows, QStringLiteral("winograd_tile"));
    QVERIFY(winograd);
    QCOMPARE(winograd->values, QStringLiteral("auto, f2, f4"));

    // loadKnobRows is both steps.
    const std::optional<QVector<KnobRow>> loaded =
        loadKnobRows(QStringLiteral(TUNESCOPE_CLI_PATH), &error);
    QVERIFY2(loaded, qPrintable(error));
    QCOMPARE(loaded->size(), rows->size());
  }

  void refusesMalformedCatalogsByName() {
    QString error;
    QVERIFY2(parseKnobRows(kOneKnob, &error), qPrintable(error));

    QVERIFY(parseError("{\"schema\": ").contains(QStringLiteral("not JSON")));
    QVERIFY(parseError("{\"schema\": ").contains(QStringLiteral("offset")));
    QCOMPARE(parseError("[1,2]"), QStringLiteral("the knob catalog is not a JSON object"));
    QCOMPARE(parseError(R"({"schema":"tunescope.knobs/2","knobs":[]})"),
             QStringLiteral(
                 "the knob catalog's schema is 'tunescope.knobs/2', expected tunescope.knobs/1"));
    QCOMPARE(parseError(R"({"schema":"tunescope.knobs/1","knobs":{}})"),
             QStringLiteral("the knob catalog has no \"knobs\" array"));
    QCOMPARE(parseError(R"({"schema":"tunescope.knobs/1","knobs":[3]})"),
             QStringLiteral("knob 1 is not an object"));

    QByteArray noFlag = kOneKnob;
    noFlag.replace(R"("list_flag":"--fft-tile-list",)", "");
    QCOMPARE(parseError(noFlag),
             QStringLiteral("knob 1 ('fft_tile'): \"list_flag\" is missing or not a string"));
    QByteArray badFlag = kOneKnob;
    badFlag.replace("\"--fft-tile-list\"", "\"fft-tile\"");
    QCOMPARE(parseError(badFlag), QStringLiteral("knob 1 ('fft_tile'): \"list_flag\" 'fft-tile' is "
                                                 "not an option such as --fft_tile-list"));
    QByteArray badDefault = kOneKnob;
    badDefault.replace(R"(["auto"])", "[4]");
    QCOMPARE(parseError(badDefault),
             QStringLiteral(
                 "knob 1 ('fft_tile'): \"tune_default\" holds something that is not a string"));
    QByteArray noKey = kOneKnob;
    noKey.replace(R"("key":"fft_tile",)", "");
    QCOMPARE(parseError(noKey), QStringLiteral("knob 1: \"key\" is missing or not a string"));
    QByteArray twice = kOneKnob;
    const QByteArray knob =
        twice.mid(twice.indexOf("[{") + 1, twice.lastIndexOf("}]") - twice.indexOf("[{"));
    twice.replace("}]}", "}," + knob + "]}");
    QCOMPARE(parseError(twice), QStringLiteral("knob 2: the key 'fft_tile' appears twice"));
  }

  void reportsACliThatIsMissingFailsOrHangs() {
    QTemporaryDir dir;
    QString error;
    QVERIFY(!readKnobCatalogJson(QString(), &error));
    QVERIFY(error.contains(QStringLiteral("no tunescope CLI")));

    const QString missing = dir.filePath(QStringLiteral("no-such-tunescope"));
    QVERIFY(!readKnobCatalogJson(missing, &error));
    QVERIFY2(error.contains(missing) && error.contains(QStringLiteral("did not start")),
             qPrintable(error));

    // A CLI without the knobs command (an older build): exit 2 and its own message.
    auto script = [&](const char* name, const QByteArray& body) {
      const QString path = dir.filePath(QLatin1String(name));
      QFile file(path);
      if (!file.open(QIODevice::WriteOnly)) qFatal("cannot write %s", qPrintable(path));
      file.write("#!/bin/sh\n" + body);
      file.close();
      file.setPermissions(QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
      return path;
    };
    const QString old =
        script("old-tunescope", "echo 'tunescope: error: unknown command knobs' >&2\nexit 2\n");
    QVERIFY(!readKnobCatalogJson(old, &error));
    QCOMPARE(
        error,
        QStringLiteral("`%1 knobs --json` failed (exit 2): tunescope: error: unknown command knobs")
            .arg(old));

    const QString hangs = script("hanging-tunescope", "exec sleep 30\n");
    QElapsedTimer clock;
    clock.start();
    QVERIFY(!readKnobCatalogJson(hangs, &error, 300));
    QCOMPARE(error, QStringLiteral("`%1 knobs --json` did not finish within 0.3 s").arg(hangs));
    QVERIFY(clock.elapsed() < 20'000);  // killed, not waited for

    const QString garbage = script("garbage-tunescope", "echo 'not json'\n");
    QVERIFY(!loadKnobRows(garbage, &error));
    QVERIFY2(error.startsWith(
                 QStringLiteral("`%1 knobs --json`: the knob catalog is not JSON").arg(garbage)),
             qPrintable(error));
  }

  void knobListsBecomeListFlagsInCatalogOrder() {
    QString error;
    const std::optional<QVector<KnobRow>> rows = parseKnobRows(catalogJson(), &error);
    QVERIFY2(rows, qPrintable(error));
    TuneRequest r;
    r.knobCatalog = *rows;
    r.knobLists = {{QStringLiteral("fft_tile"), QStringLiteral("auto,16")},
                   {QStringLiteral("threads"), QStringLiteral("1,4")},
                   {QStringLiteral("layout"), QStringLiteral(" nhwc ")},
                   {QStringLiteral("streams"), QString()}};  // empty: the CLI's tune default
    r.algorithms = {QStringLiteral("fft-own")};
    r.extraArguments = QStringLiteral("--fake-count 64");
    const QStringList expected{QStringLiteral("tune"),    QStringLiteral("--model"),
                               QStringLiteral("lenet5"),  QStringLiteral("--data"),
                               QStringLiteral("fake"),    QStringLiteral("--batch"),
                               QStringLiteral("32"),      QStringLiteral("--strategy"),
                               QStringLiteral("auto"),    QStringLiteral("--steps"),
                               QStringLiteral("5"),       QStringLiteral("--warmup"),
                               QStringLiteral("2"),       QStringLiteral("--layout-list"),
                               QStringLiteral("nhwc"),    QStringLiteral("--threads-list"),
                               QStringLiteral("1,4"),     QStringLiteral("--fft-tile-list"),
                               QStringLiteral("auto,16"), QStringLiteral("--algorithms"),
                               QStringLiteral("fft-own"), QStringLiteral("--fake-count"),
                               QStringLiteral("64"),      QStringLiteral("--progress"),
                               QStringLiteral("jsonl")};
    QCOMPARE(r.arguments(), expected);

    // A key the catalog lacks still reaches the CLI, whose message then names it.
    r.knobLists[QStringLiteral("no_such_knob")] = QStringLiteral("3");
    const QStringList args = r.arguments();
    QCOMPARE(args.mid(args.indexOf(QStringLiteral("--fft-tile-list")) + 2, 2),
             (QStringList{QStringLiteral("--no-such-knob-list"), QStringLiteral("3")}));
    QCOMPARE(args.last(), QStringLiteral("jsonl"));

    // The default request tries 1 and every hardware thread.
    QCOMPARE(TuneRequest().knobLists.value(QStringLiteral("threads")),
             TuneRequest::defaultThreads());
  }
};

QTEST_MAIN(KnobRowsTest)
#include "tst_knobrows.moc"
