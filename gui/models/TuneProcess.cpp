#include "models/TuneProcess.h"

#include <signal.h>

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QStandardPaths>

namespace tunescope::gui {

namespace {
// The CLI exits 128 + signal after an interrupted tune (SIGINT, or SIGTERM).
bool isInterruptExit(int code) { return code == 128 + SIGINT || code == 128 + SIGTERM; }
}  // namespace

TuneProcess::TuneProcess(QObject* parent)
    : QObject(parent), process_(new QProcess(this)), program_(locateCli()) {
  connect(process_, &QProcess::readyReadStandardOutput, this, &TuneProcess::readEvents);
  connect(process_, &QProcess::readyReadStandardError, this, &TuneProcess::readLog);
  connect(process_, &QProcess::finished, this, &TuneProcess::processEnded);
  connect(process_, &QProcess::errorOccurred, this, &TuneProcess::processError);
}

TuneProcess::~TuneProcess() {
  if (!isRunning()) return;
  // No signals into an owner that is being destroyed.
  process_->disconnect(this);
  process_->kill();
  process_->waitForFinished(5000);
}

QString TuneProcess::locateCli() {
  const QFileInfo beside(
      QDir(QCoreApplication::applicationDirPath()).filePath(QStringLiteral("tunescope")));
  if (beside.isFile() && beside.isExecutable()) return beside.absoluteFilePath();
  return QStandardPaths::findExecutable(QStringLiteral("tunescope"));
}

bool TuneProcess::start(const TuneRequest& request) {
  if (isRunning()) return false;
  stderrText_.clear();
  done_.reset();
  cancels_ = 0;
  if (program_.isEmpty()) {
    // No child, so no QProcess signal: report it the same way, after the caller's
    // start() returned (as a real start would).
    QMetaObject::invokeMethod(
        this,
        [this] {
          emit finished({TuneOutcome::Result::Failed, -1,
                         tr("the tunescope CLI was found neither next to %1 nor on PATH")
                             .arg(QCoreApplication::applicationDirPath()),
                         std::nullopt});
        },
        Qt::QueuedConnection);
    return true;
  }
  const QStringList args = request.arguments();
  process_->start(program_, args);
  QStringList shown{program_};
  for (const QString& a : args)
    shown << (a.contains(QLatin1Char(' ')) || a.isEmpty()
                  ? QLatin1Char('\'') + a + QLatin1Char('\'')
                  : a);
  emit started(shown.join(QLatin1Char(' ')));
  return true;
}

void TuneProcess::cancel() {
  if (!isRunning()) return;
  ++cancels_;
  ::kill(static_cast<pid_t>(process_->processId()), SIGINT);
}

void TuneProcess::readEvents() {
  while (process_->canReadLine()) {
    const QByteArray line = process_->readLine().trimmed();
    if (line.isEmpty()) continue;
    QString error;
    if (std::optional<TuneEvent> e = parseTuneEvent(line, &error)) {
      if (e->kind == TuneEvent::Kind::Done) done_ = *e;
      emit tuneEvent(*e);
    } else {
      emit logText(tr("[unexpected progress line] %1\n").arg(error));
    }
  }
}

void TuneProcess::readLog() {
  const QString text = QString::fromLocal8Bit(process_->readAllStandardError());
  stderrText_ += text;
  emit logText(text);
}

QString TuneProcess::errorLine() const {
  // The CLI's message is its last "tunescope: ..." line (the interrupt notice aside).
  const QStringList lines = stderrText_.split(QLatin1Char('\n'), Qt::SkipEmptyParts);
  for (auto it = lines.crbegin(); it != lines.crend(); ++it)
    if (it->startsWith(QLatin1String("tunescope: ")) &&
        !it->startsWith(QLatin1String("tunescope: interrupted")))
      return it->trimmed();
  return lines.isEmpty() ? QString() : lines.last().trimmed();
}

void TuneProcess::processEnded(int exitCode, QProcess::ExitStatus status) {
  // What the pipes still hold arrives before the verdict.
  readEvents();
  readLog();
  TuneOutcome outcome;
  outcome.done = done_;
  if (status == QProcess::CrashExit) {
    outcome.result = cancels_ > 0 ? TuneOutcome::Result::Interrupted : TuneOutcome::Result::Failed;
    // Killed by a repeated SIGINT (or one that came before the CLI could catch it).
    outcome.message = cancels_ > 0
                          ? tr("stopped at once: the trials finished before are in the results DB")
                          : tr("tunescope ended abnormally (%1)").arg(process_->errorString());
  } else {
    outcome.exitCode = exitCode;
    if (exitCode == 0 && done_)
      outcome.result = TuneOutcome::Result::Completed;
    else if (isInterruptExit(exitCode))
      outcome.result = TuneOutcome::Result::Interrupted;
    else if (exitCode == 0)
      outcome.message =
          tr("tunescope exited without reporting the end of the tune (is it older than this GUI?)");
    else {
      outcome.message = errorLine();
      if (outcome.message.isEmpty())
        outcome.message = tr("tunescope exited with status %1").arg(exitCode);
    }
  }
  emit finished(outcome);
}

void TuneProcess::processError(QProcess::ProcessError error) {
  // Only a failed start ends without finished(); the other errors precede it.
  if (error != QProcess::FailedToStart) return;
  emit finished({TuneOutcome::Result::Failed, -1,
                 tr("could not start %1: %2").arg(program_, process_->errorString()),
                 std::nullopt});
}

}  // namespace tunescope::gui
