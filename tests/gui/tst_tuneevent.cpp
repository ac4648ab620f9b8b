// The Run tab's models without a child process: progress lines of the CLI's schema
// (tunescope.tune-progress/1) parse into events, foreign lines are refused with a
// message, and the trials table turns a running row into its finished trial.
#include <QFont>
#include <QtTest>

#include "models/TuneEvent.h"
#include "models/TuneTrialsModel.h"

using namespace tunescope::gui;

namespace {

TuneEvent parsed(const char* line) {
  QString error;
  const std::optional<TuneEvent> e = parseTuneEvent(QByteArray(line), &error);
  if (!e) qFatal("%s", qPrintable(error));
  return *e;
}

const char* kTrialStart =
    R"({"event":"trial_start","index":2,"total":4,"candidate":"nhwc conv=gemm threads=1"})";
const char* kTrial =
    R"({"event":"trial","index":2,"total":4,"candidate":"nhwc conv=gemm threads=1","status":"invalid",)"
    R"("reason":"loss differs","reused":false,"median_eps":0,"spread":0,"seconds":0.5,"elapsed":2.5,"eta":2.5,)"
    R"("best":{"candidate":"nchw conv=direct threads=1","median_eps":5318.5}})";

}  // namespace

class TuneEventTest : public QObject {
  Q_OBJECT
 private slots:
  void parsesEachKind() {
    const TuneEvent start = parsed(
        R"({"event":"start","schema":"tunescope.tune-progress/1","model":"lenet5","batch":8,"data":"fake",)"
        R"("strategy":"exhaustive","total":4,"db":null})");
    QCOMPARE(int(start.kind), int(TuneEvent::Kind::Start));
    QCOMPARE(start.total, 4);
    QCOMPARE(start.batch, 8);
    QVERIFY(start.dbPath.isEmpty());

    const TuneEvent trial = parsed(kTrial);
    QCOMPARE(int(trial.kind), int(TuneEvent::Kind::Trial));
    QCOMPARE(trial.index, 2);
    QCOMPARE(trial.status, QStringLiteral("invalid"));
    QCOMPARE(trial.reason, QStringLiteral("loss differs"));
    QCOMPARE(trial.eta, 2.5);
    QCOMPARE(trial.bestCandidate, QStringLiteral("nchw conv=direct threads=1"));
    QCOMPARE(trial.bestEps, 5318.5);

    const TuneEvent round = parsed(
        R"({"event":"round","index":3,"total":9,"round":12,"members":7,"racing":4,"to_decide":40,)"
        R"("least":6,"most":200,"elapsed":8.25})");
    QCOMPARE(int(round.kind), int(TuneEvent::Kind::Round));
    QCOMPARE(round.index, 3);
    QCOMPARE(round.total, 9);
    QCOMPARE(round.round, 12);
    QCOMPARE(round.members, 7);
    QCOMPARE(round.racing, 4);
    QCOMPARE(round.toDecide, 40);
    QCOMPARE(round.elapsed, 8.25);
    QVERIFY(round.candidate.isEmpty());
    // Before the verdict can say, to_decide is null.
    const TuneEvent early = parsed(
        R"({"event":"round","index":3,"total":9,"round":1,"members":7,"racing":7,"to_decide":null,)"
        R"("most":200,"elapsed":1.5})");
    QCOMPARE(early.toDecide, 0);

    const TuneEvent done = parsed(
        R"({"event":"done","interrupted":true,"trials":3,"winner":null,"decision":"interrupted","out":null,)"
        R"("traces":{},"db":"r.sqlite","seconds":4.5})");
    QCOMPARE(int(done.kind), int(TuneEvent::Kind::Done));
    QVERIFY(done.interrupted);
    QCOMPARE(done.trials, 3);
    QVERIFY(done.bestCandidate.isEmpty());
    QVERIFY(done.outPath.isEmpty());
    QVERIFY(done.traces.isEmpty());
    QCOMPARE(done.dbPath, QStringLiteral("r.sqlite"));
  }

  void refusesForeignLines() {
    for (const char* line :
         {"winner: nchw conv=direct", "[1, 2]", R"({"event":"party"})", "{\"event\":"}) {
      QString error;
      QVERIFY2(!parseTuneEvent(QByteArray(line), &error), line);
      QVERIFY2(!error.isEmpty(), line);
    }
  }

  void runningRowBecomesItsTrial() {
    TuneTrialsModel model;
    model.apply(parsed(kTrialStart));
    QCOMPARE(model.rowCount(), 1);
    QCOMPARE(model.finishedCount(), 0);
    QCOMPARE(model.index(0, TuneTrialsModel::StatusColumn).data().toString(),
             QStringLiteral("running…"));
    model.apply(parsed(kTrial));
    QCOMPARE(model.rowCount(), 1);
    QCOMPARE(model.finishedCount(), 1);
    QCOMPARE(model.index(0, TuneTrialsModel::StatusColumn).data().toString(),
             QStringLiteral("invalid"));
    QCOMPARE(model.index(0, TuneTrialsModel::EpsColumn).data().toString(), QStringLiteral("–"));
    QCOMPARE(model.bestCandidate(), QStringLiteral("nchw conv=direct threads=1"));
    QCOMPARE(model.index(0, TuneTrialsModel::RatioColumn).data().toString(),
             QStringLiteral("–"));  // no baseline row

    // A tune stopped at once leaves its running row marked, not counted as measured.
    TuneEvent next = parsed(kTrialStart);
    next.index = 3;
    model.apply(next);
    model.abandonRunning(QStringLiteral("stopped"));
    QCOMPARE(model.rowCount(), 2);
    QCOMPARE(model.finishedCount(), 1);
    QCOMPARE(model.index(1, TuneTrialsModel::StatusColumn).data().toString(),
             QStringLiteral("not finished"));
    QCOMPARE(model.index(1, TuneTrialsModel::ReasonColumn).data().toString(),
             QStringLiteral("stopped"));
  }

  void theRoundsMembersRunTogetherAndEachRowBecomesItsTrial() {
    // Interleaved rounds announce their new members at once (trials 1 to 3), send round
    // lines while they run, and the members' trials when they end.
    TuneTrialsModel model;
    for (int i = 1; i <= 3; ++i) {
      TuneEvent start = parsed(kTrialStart);
      start.index = i;
      start.candidate = QStringLiteral("member %1").arg(i);
      model.apply(start);
    }
    model.apply(parsed(R"({"event":"round","index":0,"total":3,"round":1,"members":3,)"
                       R"("racing":3,"to_decide":null,"most":200,"elapsed":0.5})"));
    QCOMPARE(model.rowCount(), 3);
    QCOMPARE(model.finishedCount(), 0);
    for (int i = 1; i <= 3; ++i) {
      TuneEvent trial = parsed(kTrial);
      trial.index = i;
      trial.candidate = QStringLiteral("member %1").arg(i);
      model.apply(trial);
    }
    QCOMPARE(model.rowCount(), 3);
    QCOMPARE(model.finishedCount(), 3);
    for (int r = 0; r < 3; ++r) {
      QCOMPARE(model.index(r, TuneTrialsModel::CandidateColumn).data().toString(),
               QStringLiteral("member %1").arg(r + 1));
      QCOMPARE(model.index(r, TuneTrialsModel::StatusColumn).data().toString(),
               QStringLiteral("invalid"));
    }
    // Stopped while two run: both are marked.
    for (int i = 4; i <= 5; ++i) {
      TuneEvent start = parsed(kTrialStart);
      start.index = i;
      model.apply(start);
    }
    model.abandonRunning(QStringLiteral("stopped"));
    QCOMPARE(model.rowCount(), 5);
    QCOMPARE(model.finishedCount(), 3);
    for (int r = 3; r < 5; ++r)
      QCOMPARE(model.index(r, TuneTrialsModel::StatusColumn).data().toString(),
               QStringLiteral("not finished"));
  }

  void ratiosAgainstTheFirstCandidateAndTheDeclaredWinner() {
    TuneTrialsModel model;
    auto ok = [](int index, const char* candidate, double eps) {
      TuneEvent e = parsed(kTrial);
      e.index = index;
      e.candidate = QString::fromLatin1(candidate);
      e.status = QStringLiteral("ok");
      e.medianEps = eps;
      e.bestCandidate = QStringLiteral("nhwc conv=gemm threads=1");
      return e;
    };
    model.apply(ok(1, "nchw conv=direct threads=1", 1000));
    model.apply(ok(2, "nhwc conv=gemm threads=1", 1500));
    QCOMPARE(model.index(0, TuneTrialsModel::RatioColumn).data().toString(),
             QStringLiteral("1.00×"));
    QCOMPARE(model.index(1, TuneTrialsModel::RatioColumn).data().toString(),
             QStringLiteral("1.50×"));
    QVERIFY(model.index(1, 0).data(Qt::FontRole).value<QFont>().bold());
    // A tie within noise crowned the simpler baseline: done says so, and the bold row moves.
    TuneEvent done = parsed(
        R"({"event":"done","interrupted":false,"trials":2,)"
        R"("winner":{"candidate":"nchw conv=direct threads=1","median_eps":1010,"spread":0.1}})");
    model.apply(done);
    QCOMPARE(model.bestCandidate(), QStringLiteral("nchw conv=direct threads=1"));
    QVERIFY(model.index(0, 0).data(Qt::FontRole).value<QFont>().bold());
    QVERIFY(!model.index(1, 0).data(Qt::FontRole).value<QFont>().bold());
    QCOMPARE(model.index(0, TuneTrialsModel::ReasonColumn).data().toString(),
             QStringLiteral("winner: %L1 ex/s when re-measured against the runner-up")
                 .arg(1010.0, 0, 'f', 1));
  }
};

QTEST_MAIN(TuneEventTest)
#include "tst_tuneevent.moc"
