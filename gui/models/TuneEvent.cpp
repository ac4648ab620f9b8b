#include "models/TuneEvent.h"

#include <QJsonDocument>
#include <QJsonObject>

namespace tunescope::gui {

namespace {

QString pathOrEmpty(const QJsonValue& value) {
  return value.isString() ? value.toString() : QString();
}

}  // namespace

std::optional<TuneEvent> parseTuneEvent(const QByteArray& line, QString* error) {
  QJsonParseError parseError;
  const QJsonDocument document = QJsonDocument::fromJson(line, &parseError);
  if (!document.isObject()) {
    if (error)
      *error = parseError.error != QJsonParseError::NoError
                   ? QStringLiteral("not JSON (%1): %2")
                         .arg(parseError.errorString(), QString::fromUtf8(line.left(120)))
                   : QStringLiteral("not a JSON object: %1").arg(QString::fromUtf8(line.left(120)));
    return std::nullopt;
  }
  const QJsonObject o = document.object();
  const QString name = o.value(QLatin1String("event")).toString();
  TuneEvent e;
  if (name == QLatin1String("start")) {
    e.kind = TuneEvent::Kind::Start;
    e.model = o.value(QLatin1String("model")).toString();
    e.data = o.value(QLatin1String("data")).toString();
    e.strategy = o.value(QLatin1String("strategy")).toString();
    e.dbPath = pathOrEmpty(o.value(QLatin1String("db")));
    e.batch = o.value(QLatin1String("batch")).toInt();
  } else if (name == QLatin1String("trial_start")) {
    e.kind = TuneEvent::Kind::TrialStart;
  } else if (name == QLatin1String("trial")) {
    e.kind = TuneEvent::Kind::Trial;
    e.status = o.value(QLatin1String("status")).toString();
    e.reason = o.value(QLatin1String("reason")).toString();
    e.reused = o.value(QLatin1String("reused")).toBool();
    e.medianEps = o.value(QLatin1String("median_eps")).toDouble();
    e.spread = o.value(QLatin1String("spread")).toDouble();
    e.seconds = o.value(QLatin1String("seconds")).toDouble();
    e.elapsed = o.value(QLatin1String("elapsed")).toDouble();
    e.eta = o.value(QLatin1String("eta")).toDouble();
    const QJsonObject best = o.value(QLatin1String("best")).toObject();
    e.bestCandidate = best.value(QLatin1String("candidate")).toString();
    e.bestEps = best.value(QLatin1String("median_eps")).toDouble();
  } else if (name == QLatin1String("round")) {
    e.kind = TuneEvent::Kind::Round;
    e.round = o.value(QLatin1String("round")).toInt();
    e.members = o.value(QLatin1String("members")).toInt();
    e.racing = o.value(QLatin1String("racing")).toInt();
    e.toDecide = o.value(QLatin1String("to_decide")).toInt();  // null reads 0
    e.elapsed = o.value(QLatin1String("elapsed")).toDouble();
  } else if (name == QLatin1String("done")) {
    e.kind = TuneEvent::Kind::Done;
    e.interrupted = o.value(QLatin1String("interrupted")).toBool();
    e.trials = o.value(QLatin1String("trials")).toInt();
    const QJsonObject winner = o.value(QLatin1String("winner")).toObject();
    e.bestCandidate = winner.value(QLatin1String("candidate")).toString();
    e.bestEps = winner.value(QLatin1String("median_eps")).toDouble();
    e.decision = o.value(QLatin1String("decision")).toString();
    e.outPath = pathOrEmpty(o.value(QLatin1String("out")));
    e.dbPath = pathOrEmpty(o.value(QLatin1String("db")));
    const QJsonObject traces = o.value(QLatin1String("traces")).toObject();
    for (auto it = traces.begin(); it != traces.end(); ++it)
      e.traces.insert(it.key(), it.value().toString());
    e.tuneSeconds = o.value(QLatin1String("seconds")).toDouble();
  } else {
    if (error)
      *error =
          QStringLiteral("unknown event '%1': %2").arg(name, QString::fromUtf8(line.left(120)));
    return std::nullopt;
  }
  if (e.kind != TuneEvent::Kind::Done) {
    e.index = o.value(QLatin1String("index")).toInt();
    e.total = o.value(QLatin1String("total")).toInt();
    e.candidate = o.value(QLatin1String("candidate")).toString();
  }
  return e;
}

}  // namespace tunescope::gui
