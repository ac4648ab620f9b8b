// tunescope-gui-bench: times what opening and painting a large trace costs in the GUI
// — read + document build of a generated 1M-event trace (beside an nlohmann::json DOM
// parse of the same file), the LOD pass of every lane, and a whole TimelineView paint
// (offscreen), for the full view and zoomed views.
//   tunescope-gui-bench [EVENTS]          all of it on a generated trace (default 1M)
//   tunescope-gui-bench --write EVENTS F  only writes the generated trace to F
//   tunescope-gui-bench --open F          opens F in a fresh process: open time, resident
//                                         memory (peak and after), LOD and paint times
//   tunescope-gui-bench --dom F           the peer alone: an nlohmann::json DOM parse of F
// --open runs in its own process so that its peak resident memory is the open's alone.
#include <QApplication>
#include <QElapsedTimer>
#include <QImage>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>

#include "models/LodBuilder.h"
#include "models/TraceDocument.h"
#include "profiler/ChromeTraceReader.h"
#include "profiler/ChromeTraceWriter.h"
#include "profiler/TraceFiles.h"
#include "widgets/TimelineView.h"

using namespace tunescope;

namespace {

profiler::Trace generateTrace(size_t events, int lanes) {
  profiler::Trace trace;
  trace.metadata.backend = "cpu";
  trace.metadata.machine = "generated";
  std::mt19937_64 rng(42);
  std::uniform_int_distribution<int64_t> duration(200, 20'000), gap(50, 5'000);
  const char* names[] = {"direct.fwd", "gemm.bwd_data", "fft-own.bwd_filter",
                         "bn.fwd",     "relu.fwd",      "sgd"};
  const size_t perLane = events / static_cast<size_t>(lanes);
  for (int lane = 0; lane < lanes; ++lane) {
    int64_t t = 1'000'000'000;
    for (size_t i = 0; i < perLane; ++i) {
      profiler::Activity a;
      a.name = names[(i * 7 + static_cast<size_t>(lane)) % 6];
      a.stream = lane;
      a.start_ns = t;
      a.end_ns = t + duration(rng);
      a.flops = 1e6;
      t = a.end_ns + gap(rng);
      trace.activities.push_back(std::move(a));
    }
  }
  profiler::sort_by_start(trace);
  return trace;
}

// Resident memory of this process in MB: VmRSS now, VmHWM the peak so far (Linux).
double residentMb(const char* field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind(field, 0) == 0) return std::stod(line.substr(std::strlen(field) + 1)) / 1024;
  return -1;
}

// CPU time of this process (open) or thread (frames) in ms: on a machine shared with
// other builds the wall time mostly measures the wait for a core.
double cpuMs(clockid_t clock) {
  timespec t{};
  clock_gettime(clock, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

double msSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// Mean time of one LOD pass over every lane, and the boxes it drew.
void timeLod(const gui::TraceDocument& doc, double fraction, int width) {
  gui::TimelineData tl;
  tl.setWidth(width);
  tl.setBounds(doc.extent().start_ns, doc.extent().end_ns);
  tl.zoomAround(width / 2.0, 1.0 / fraction);
  const int repeats = 50;
  size_t boxes = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (int r = 0; r < repeats; ++r) {
    boxes = 0;
    for (const gui::ActivityLane& lane : doc.lanes())
      boxes += gui::buildLod(lane.series, tl).size();
  }
  std::printf("LOD %-14s %8.3f ms per frame (%zu lanes, %zu boxes, %d px)\n",
              fraction == 1.0 ? "full view"
                              : QStringLiteral("zoom %1%").arg(fraction * 100).toUtf8().constData(),
              msSince(t0) / repeats, doc.lanes().size(), boxes, width);
}

// Mean time of a full repaint of the timeline widget (ruler, ranges, lanes, legend).
void timePaint(const gui::TraceDocumentPtr& doc, double fraction) {
  gui::TimelineView view;
  view.resize(1600 + gui::TimelineView::kHeaderWidth, 600);
  view.setDocument(doc);
  const double centre = (doc->extent().start_ns + doc->extent().end_ns) / 2.0;
  const double span = doc->extent().duration_ns() * fraction;
  view.showWindow(centre - span / 2, centre + span / 2);
  QImage image(view.size(), QImage::Format_ARGB32_Premultiplied);
  const int repeats = 20;
  const auto t0 = std::chrono::steady_clock::now();
  const double cpu0 = cpuMs(CLOCK_THREAD_CPUTIME_ID);
  for (int r = 0; r < repeats; ++r) view.render(&image);
  std::printf("paint %-12s %8.2f ms per frame, CPU %.2f ms (TimelineView %dx%d)\n",
              fraction == 1.0 ? "full view"
                              : QStringLiteral("zoom %1%").arg(fraction * 100).toUtf8().constData(),
              msSince(t0) / repeats, (cpuMs(CLOCK_THREAD_CPUTIME_ID) - cpu0) / repeats,
              view.width(), view.height());
}

// The --open mode: what a user waits for and what the process holds, then frame times.
int openOnly(const std::filesystem::path& path) {
  std::printf("trace file %s: %.1f MB, resident before: %.0f MB\n", path.c_str(),
              std::filesystem::file_size(path) / 1e6, residentMb("VmRSS:"));
  const auto t0 = std::chrono::steady_clock::now();
  const double cpu0 = cpuMs(CLOCK_PROCESS_CPUTIME_ID);
  // TraceDocument::load's two steps, apart, so the peak can be told to the reader or the document.
  profiler::Trace trace = profiler::read_trace_file(path);
  std::printf("read: %.0f ms, CPU %.0f ms; resident %.0f MB, peak %.0f MB\n", msSince(t0),
              cpuMs(CLOCK_PROCESS_CPUTIME_ID) - cpu0, residentMb("VmRSS:"), residentMb("VmHWM:"));
  auto doc = std::make_shared<const gui::TraceDocument>(std::move(trace),
                                                        QString::fromStdString(path.string()));
  std::printf(
      "open (read + document): %.0f ms, CPU %.0f ms, %zu activities; resident after %.0f MB, peak "
      "%.0f MB\n",
      msSince(t0), cpuMs(CLOCK_PROCESS_CPUTIME_ID) - cpu0, doc->trace().activities.size(),
      residentMb("VmRSS:"), residentMb("VmHWM:"));
  for (double fraction : {1.0, 0.01, 0.0001}) timeLod(*doc, fraction, 1600);
  for (double fraction : {1.0, 0.01, 0.0001}) timePaint(doc, fraction);
  std::printf("peak resident after painting: %.0f MB\n", residentMb("VmHWM:"));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "--open" && argc == 3) return openOnly(argv[2]);
  if (mode == "--dom" && argc == 3) {
    // The peer alone, in its own process: an nlohmann::json DOM parse of the file.
    const auto t0 = std::chrono::steady_clock::now();
    const double cpu0 = cpuMs(CLOCK_PROCESS_CPUTIME_ID);
    std::ifstream in(argv[2], std::ios::binary);
    const nlohmann::json dom = nlohmann::json::parse(in);
    std::printf("peer: DOM parse %.0f ms, CPU %.0f ms, %zu events, peak resident %.0f MB\n",
                msSince(t0), cpuMs(CLOCK_PROCESS_CPUTIME_ID) - cpu0, dom.at("traceEvents").size(),
                residentMb("VmHWM:"));
    return 0;
  }
  if (mode == "--write" && argc == 4) {
    const auto t0 = std::chrono::steady_clock::now();
    profiler::ChromeTraceWriter().write(generateTrace(std::stoul(argv[2]), 4), argv[3]);
    std::printf("wrote %s: %.1f MB in %.0f ms\n", argv[3],
                std::filesystem::file_size(argv[3]) / 1e6, msSince(t0));
    return 0;
  }
  if (!mode.empty() && mode[0] == '-') {
    std::fprintf(
        stderr,
        "usage: tunescope-gui-bench [EVENTS] | --write EVENTS FILE | --open FILE | --dom FILE\n");
    return 2;
  }
  const size_t events = argc > 1 ? std::stoul(argv[1]) : 1'000'000;
  const auto path = std::filesystem::temp_directory_path() / "tunescope-gui-bench.json";

  auto t0 = std::chrono::steady_clock::now();
  profiler::Trace trace = generateTrace(events, 4);
  std::printf("generated %zu events in %.0f ms\n", trace.activities.size(), msSince(t0));
  profiler::ChromeTraceWriter().write(trace, path);
  std::printf("trace file %s: %.1f MB\n", path.c_str(), std::filesystem::file_size(path) / 1e6);

  t0 = std::chrono::steady_clock::now();
  auto doc = gui::TraceDocument::load(QString::fromStdString(path.string()));
  std::printf("load-to-document (read JSON + lanes + kernel table): %.0f ms\n", msSince(t0));

  t0 = std::chrono::steady_clock::now();
  const profiler::Trace streamed = profiler::read_chrome_trace(path);
  const double readMs = msSince(t0);
  std::printf("streaming read_chrome_trace: %.0f ms (%zu activities)\n", readMs,
              streamed.activities.size());

  // The peer: what the reader cost when it built an nlohmann::json DOM of the file
  // (as it did before it streamed); a DOM parse alone is a lower bound of that.
  t0 = std::chrono::steady_clock::now();
  {
    std::ifstream in(path, std::ios::binary);
    const nlohmann::json dom = nlohmann::json::parse(in);
    std::printf("peer: nlohmann::json DOM parse of the file: %.0f ms (%zu events)\n", msSince(t0),
                dom.at("traceEvents").size());
  }
  const double peerMs = msSince(t0);
  std::printf("streaming read / DOM parse: %.2f\n", readMs / peerMs);

  t0 = std::chrono::steady_clock::now();
  gui::TraceDocument rebuilt(trace, QStringLiteral("memory"));
  std::printf("document build only (lanes + range rows + summary): %.0f ms\n", msSince(t0));

  for (double fraction : {1.0, 0.1, 0.01, 0.0001}) timeLod(*doc, fraction, 1600);
  for (double fraction : {1.0, 0.01, 0.0001}) timePaint(doc, fraction);
  std::filesystem::remove(path);
  return 0;
}
