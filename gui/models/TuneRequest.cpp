#include "models/TuneRequest.h"

#include <QDir>
#include <QProcess>
#include <QThread>

namespace tunescope::gui {

QStringList TuneRequest::arguments() const {
  QStringList args{QStringLiteral("tune"),
                   QStringLiteral("--model"),
                   model,
                   QStringLiteral("--data"),
                   data,
                   QStringLiteral("--batch"),
                   QString::number(batch),
                   QStringLiteral("--strategy"),
                   strategy,
                   QStringLiteral("--steps"),
                   QString::number(steps),
                   QStringLiteral("--warmup"),
                   QString::number(warmup)};
  // Empty lists leave the CLI's defaults.
  QMap<QString, QString> lists = knobLists;
  for (const KnobRow& knob : knobCatalog) {
    const QString text = lists.take(knob.key).trimmed();
    if (!text.isEmpty()) args << knob.listFlag << text;
  }
  // Keys without a catalog row (none read, or an older CLI): the CLI's own flag rule, so
  // that its "unknown option" message names the key.
  for (auto it = lists.cbegin(); it != lists.cend(); ++it) {
    const QString text = it.value().trimmed();
    if (text.isEmpty()) continue;
    QString flag = it.key();
    args << QStringLiteral("--%1-list").arg(flag.replace(QLatin1Char('_'), QLatin1Char('-')))
         << text;
  }
  if (!algorithms.isEmpty())
    args << QStringLiteral("--algorithms") << algorithms.join(QLatin1Char(','));
  if (budgetSeconds > 0) args << QStringLiteral("--budget") << QString::number(budgetSeconds);
  if (!dbPath.isEmpty()) args << QStringLiteral("--db") << dbPath;
  // Without a path the CLI's own "--out is required" is the message.
  if (!outPath.isEmpty()) args << QStringLiteral("-o") << outPath;
  if (!traceDir.isEmpty()) args << QStringLiteral("--trace-dir") << traceDir;
  args << QProcess::splitCommand(extraArguments);
  args << QStringLiteral("--progress") << QStringLiteral("jsonl");
  return args;
}

QString TuneRequest::defaultThreads() {
  const int n = QThread::idealThreadCount();
  return n > 1 ? QStringLiteral("1,%1").arg(n) : QStringLiteral("1");
}

TuneRequest TuneRequest::inFolder(const QString& dir) {
  TuneRequest request;
  const QDir folder(dir);
  request.dbPath = folder.filePath(QStringLiteral("results.sqlite"));
  request.outPath = folder.filePath(QStringLiteral("tuned.json"));
  request.traceDir = folder.filePath(QStringLiteral("traces"));
  return request;
}

}  // namespace tunescope::gui
