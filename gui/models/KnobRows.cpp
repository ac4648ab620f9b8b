#include "models/KnobRows.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QSet>

namespace tunescope::gui {

namespace {

const QString kSchema = QStringLiteral("tunescope.knobs/1");

bool fail(QString* error, const QString& message) {
  if (error) *error = message;
  return false;
}

// An array of strings (absent allowed when `optional`), else false and *error.
bool stringList(const QJsonObject& knob, const QString& field, bool optional, const QString& where,
                QStringList* out, QString* error) {
  const QJsonValue value = knob.value(field);
  if (value.isUndefined() && optional) return true;
  if (!value.isArray())
    return fail(error, QStringLiteral("%1: \"%2\" is missing or not an array").arg(where, field));
  for (const QJsonValue& item : value.toArray()) {
    if (!item.isString())
      return fail(
          error,
          QStringLiteral("%1: \"%2\" holds something that is not a string").arg(where, field));
    *out << item.toString();
  }
  return true;
}

bool string(const QJsonObject& knob, const QString& field, const QString& where, QString* out,
            QString* error) {
  const QJsonValue value = knob.value(field);
  if (!value.isString())
    return fail(error, QStringLiteral("%1: \"%2\" is missing or not a string").arg(where, field));
  *out = value.toString();
  return true;
}

std::optional<KnobRow> parseKnob(const QJsonValue& value, int index, QString* error) {
  QString where = QStringLiteral("knob %1").arg(index + 1);
  if (!value.isObject()) {
    fail(error, QStringLiteral("%1 is not an object").arg(where));
    return std::nullopt;
  }
  const QJsonObject knob = value.toObject();
  KnobRow row;
  if (!string(knob, QStringLiteral("key"), where, &row.key, error)) return std::nullopt;
  if (row.key.isEmpty()) {
    fail(error, QStringLiteral("%1: \"key\" is empty").arg(where));
    return std::nullopt;
  }
  where += QStringLiteral(" ('%1')").arg(row.key);
  if (!string(knob, QStringLiteral("list_flag"), where, &row.listFlag, error) ||
      !string(knob, QStringLiteral("values"), where, &row.values, error) ||
      !string(knob, QStringLiteral("help"), where, &row.help, error) ||
      !string(knob, QStringLiteral("scope"), where, &row.scope, error) ||
      !stringList(knob, QStringLiteral("tune_default"), false, where, &row.tuneDefault, error) ||
      !stringList(knob, QStringLiteral("read_by"), true, where, &row.readBy, error))
    return std::nullopt;
  // The flag becomes a child process argument: it must read as an option, not a value.
  if (!row.listFlag.startsWith(QStringLiteral("--")) || row.listFlag.contains(QLatin1Char(' '))) {
    fail(error, QStringLiteral("%1: \"list_flag\" '%2' is not an option such as --%3-list")
                    .arg(where, row.listFlag, row.key));
    return std::nullopt;
  }
  return row;
}

}  // namespace

std::optional<QVector<KnobRow>> parseKnobRows(const QByteArray& json, QString* error) {
  QJsonParseError parseError;
  const QJsonDocument doc = QJsonDocument::fromJson(json, &parseError);
  if (parseError.error != QJsonParseError::NoError) {
    fail(error, QStringLiteral("the knob catalog is not JSON: %1 at offset %2")
                    .arg(parseError.errorString())
                    .arg(parseError.offset));
    return std::nullopt;
  }
  if (!doc.isObject()) {
    fail(error, QStringLiteral("the knob catalog is not a JSON object"));
    return std::nullopt;
  }
  const QJsonObject root = doc.object();
  const QString schema = root.value(QStringLiteral("schema")).toString();
  if (schema != kSchema) {
    fail(error,
         QStringLiteral("the knob catalog's schema is '%1', expected %2").arg(schema, kSchema));
    return std::nullopt;
  }
  const QJsonValue knobs = root.value(QStringLiteral("knobs"));
  if (!knobs.isArray()) {
    fail(error, QStringLiteral("the knob catalog has no \"knobs\" array"));
    return std::nullopt;
  }
  QVector<KnobRow> rows;
  QSet<QString> keys;
  const QJsonArray array = knobs.toArray();
  for (int i = 0; i < array.size(); ++i) {
    std::optional<KnobRow> row = parseKnob(array.at(i), i, error);
    if (!row) return std::nullopt;
    if (keys.contains(row->key)) {
      fail(error, QStringLiteral("knob %1: the key '%2' appears twice").arg(i + 1).arg(row->key));
      return std::nullopt;
    }
    keys.insert(row->key);
    rows << *row;
  }
  return rows;
}

std::optional<QByteArray> readKnobCatalogJson(const QString& program, QString* error,
                                              int timeoutMs) {
  if (program.isEmpty()) {
    fail(error, QStringLiteral("no tunescope CLI to ask for the knob catalog"));
    return std::nullopt;
  }
  const QString command = QStringLiteral("%1 knobs --json").arg(program);
  QProcess process;
  process.start(program, {QStringLiteral("knobs"), QStringLiteral("--json")});
  if (!process.waitForStarted(timeoutMs)) {
    fail(error, QStringLiteral("`%1` did not start: %2").arg(command, process.errorString()));
    return std::nullopt;
  }
  if (!process.waitForFinished(timeoutMs)) {
    process.kill();
    process.waitForFinished(1000);
    fail(error,
         QStringLiteral("`%1` did not finish within %2 s").arg(command).arg(timeoutMs / 1000.0));
    return std::nullopt;
  }
  if (process.exitStatus() != QProcess::NormalExit || process.exitCode() != 0) {
    // The CLI's last stderr line is its error message.
    const QStringList lines =
        QString::fromUtf8(process.readAllStandardError()).trimmed().split(QLatin1Char('\n'));
    fail(error, QStringLiteral("`%1` failed (%2)%3")
                    .arg(command,
                         process.exitStatus() == QProcess::NormalExit
                             ? QStringLiteral("exit %1").arg(process.exitCode())
                             : QStringLiteral("crashed"),
                         lines.last().isEmpty() ? QString() : QStringLiteral(": ") + lines.last()));
    return std::nullopt;
  }
  return process.readAllStandardOutput();
}

std::optional<QVector<KnobRow>> loadKnobRows(const QString& program, QString* error,
                                             int timeoutMs) {
  const std::optional<QByteArray> json = readKnobCatalogJson(program, error, timeoutMs);
  if (!json) return std::nullopt;
  QString parseError;
  std::optional<QVector<KnobRow>> rows = parseKnobRows(*json, &parseError);
  if (!rows) fail(error, QStringLiteral("`%1 knobs --json`: %2").arg(program, parseError));
  return rows;
}

}  // namespace tunescope::gui
