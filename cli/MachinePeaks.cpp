#include "cli/MachinePeaks.h"

#include <cstdio>
#include <filesystem>
#include <stdexcept>

#include "core/base/Error.h"
#include "core/base/HostCpu.h"
#include "core/base/Registry.h"
#include "core/tuner/ResultsDb.h"
#include "profiler/MetricsReport.h"

namespace tunescope::cli {

PeakLookup cached_peak(const std::string& db_path, const std::string& cpu, int threads) {
  PeakLookup lookup;
  if (db_path.empty()) {
    lookup.why_not_measured =
        "no --db to read it from; `tunescope machine --db FILE` measures and caches it";
    return lookup;
  }
  if (!std::filesystem::exists(db_path)) fail(ErrorKind::input, "--db ", db_path, ": no such file");
  const tuner::ResultsDb db(db_path, tuner::ResultsDb::Access::read_only);
  lookup.peak = profiler::machine_peak_for(db.machine_peaks(cpu), cpu, threads);
  lookup.source = "results DB " + db_path;
  if (!lookup.peak)
    lookup.why_not_measured = cat("results DB ", db_path, " has none for '", cpu, "' on ", threads,
                                  " thread", threads == 1 ? "" : "s", "; `tunescope machine --db ",
                                  db_path, " --threads ", threads, "` measures it");
  return lookup;
}

PeakLookup trace_peak(const profiler::TraceMetadata& m, const std::string& db_path) {
  const auto cpu = m.extra.find(profiler::kHostCpuKey);
  const auto threads = m.extra.find(profiler::kKernelThreadsKey);
  if (db_path.empty()) return cached_peak(db_path, "", 0);  // says there is no --db
  if (cpu == m.extra.end() || threads == m.extra.end())
    return {std::nullopt,
            "the trace does not say which CPU and how many threads its kernels ran on", ""};
  int count = 0;
  try {
    count = std::stoi(threads->second);
  } catch (const std::exception&) {
    fail(ErrorKind::input, "trace metadata '", profiler::kKernelThreadsKey, "': not a number: '",
         threads->second, "'");
  }
  return cached_peak(db_path, cpu->second, count);
}

std::vector<profiler::MachinePeak> local_peaks(const std::string& backend,
                                               const std::string& db_path, int threads,
                                               double seconds, bool remeasure) {
  const std::string cpu = host_cpu_model();
  std::optional<tuner::ResultsDb> db;
  if (!db_path.empty()) {
    db.emplace(db_path);
    if (!remeasure) {
      std::vector<profiler::MachinePeak> cached;
      for (const profiler::MachinePeak& p : db->machine_peaks(cpu))
        if (p.threads == threads) cached.push_back(p);
      if (!cached.empty()) return cached;
    }
  }
  std::printf("measuring the machine's peaks (%s, %d thread%s, about %.1f s)...\n", cpu.c_str(),
              threads, threads == 1 ? "" : "s", seconds);
  std::fflush(stdout);
  const std::vector<profiler::MachinePeak> measured =
      Registry::instance().make_backend(backend)->measure_peaks(threads, seconds);
  if (measured.empty()) fail(ErrorKind::unsupported, "backend ", backend, " has no machine probe");
  if (db)
    for (const profiler::MachinePeak& p : measured) db->store_machine_peak(p);
  return measured;
}

std::string machine_peak_line(const PeakLookup& lookup) {
  std::string out = profiler::format_machine_peak(lookup.peak, lookup.why_not_measured);
  if (lookup.peak && !lookup.source.empty()) out += "  (cached in " + lookup.source + ")\n";
  return out;
}

std::string conv_roofline_section(const profiler::Trace& trace, const PeakLookup& lookup) {
  std::vector<profiler::ConvLayerInfo> layers;
  try {
    layers = profiler::conv_layers_of(trace.metadata);
  } catch (const std::invalid_argument& e) {
    fail(ErrorKind::input, e.what());
  }
  std::string out = "\n";
  if (layers.empty())
    return out + "conv layers: none recorded in the trace metadata (not a tunescope trace)\n";
  const auto rates = profiler::conv_pass_rates(trace, layers);
  if (rates.empty())
    return out + "conv layers: no kernel named <algorithm>.<pass> in their layer ranges\n";
  out +=
      "conv passes (effective GFLOP/s: the problem's direct-convolution flops over the pass's "
      "kernel time):\n";
  return out + profiler::format_conv_roofline(rates, lookup.peak);
}

}  // namespace tunescope::cli
