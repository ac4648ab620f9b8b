// Format dispatch of trace files: a reader per sniff_file kind, a writer per format name.
#include "profiler/TraceFiles.h"

#include <stdexcept>

#include "profiler/ChromeTraceWriter.h"
#include "profiler/FileKind.h"
#include "profiler/KinetoTraceWriter.h"
#include "profiler/NsysSqliteReader.h"
#include "profiler/NsysSqliteWriter.h"

namespace tunescope::profiler {

namespace {
constexpr std::pair<TraceFormat, const char*> kFormats[] = {
    {TraceFormat::chrome, "chrome"},
    {TraceFormat::kineto, "kineto"},
    {TraceFormat::nsys_sqlite, "nsys-sqlite"},
};
}  // namespace

std::string to_string(TraceFormat format) {
  for (const auto& [value, name] : kFormats)
    if (value == format) return name;
  return "chrome";
}

std::vector<std::string> trace_format_names() {
  std::vector<std::string> names;
  for (const auto& entry : kFormats) names.emplace_back(entry.second);
  return names;
}

TraceFormat parse_trace_format(const std::string& name) {
  for (const auto& [value, known] : kFormats)
    if (name == known) return value;
  std::string list;
  for (const std::string& known : trace_format_names()) list += (list.empty() ? "" : ", ") + known;
  throw std::invalid_argument("unknown trace format '" + name + "' (known: " + list + ")");
}

std::unique_ptr<TraceWriter> make_trace_writer(TraceFormat format) {
  switch (format) {
    case TraceFormat::chrome: return std::make_unique<ChromeTraceWriter>();
    case TraceFormat::kineto: return std::make_unique<KinetoTraceWriter>();
    case TraceFormat::nsys_sqlite: return std::make_unique<NsysSqliteWriter>();
  }
  throw std::invalid_argument("unknown trace format");
}

Trace read_trace_file(const std::filesystem::path& path, const TraceReadOptions& options) {
  switch (const FileKind kind = sniff_file(path)) {
    case FileKind::nsys_sqlite:
    case FileKind::other_sqlite: break;  // the nsys reader says what is wrong with the latter
    case FileKind::results_db:
      throw std::runtime_error(path.string() + ": " + describe(kind) +
                               ", not a trace (`tunescope report` and the GUI open it)");
    default: return read_chrome_trace(path, options);  // its errors say what is wrong with the rest
  }
  const auto check_cancel = [&] {
    if (options.cancel && options.cancel->load(std::memory_order_relaxed))
      throw TraceReadCancelled(path.string() + ": loading cancelled");
  };
  check_cancel();
  Trace trace = read_nsys_sqlite(path);
  check_cancel();
  return trace;
}

}  // namespace tunescope::profiler
