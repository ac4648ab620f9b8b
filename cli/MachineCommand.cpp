// `tunescope machine`: the machine's measured peaks (fp32 FMA GFLOP/s per instruction-set
// path, memory bandwidth) next to the theoretical FMA peak, measured once and cached in
// a results DB; --remeasure measures again.
#include <cstdio>
#include <memory>
#include <thread>

#include "cli/Commands.h"
#include "cli/MachinePeaks.h"
#include "core/base/Error.h"
#include "profiler/Roofline.h"

namespace tunescope::cli {

namespace {
struct MachineFlags {
  std::string db_path;
  bool remeasure = false;
  int threads = 0;
  double seconds = kDefaultProbeSeconds;
  std::string backend = "cpu";
};
}  // namespace

Action add_machine_command(CLI::App& command) {
  auto flags = std::make_shared<MachineFlags>();
  command.add_option(
      "--db", flags->db_path,
      "Results DB (created if missing) to cache the figures in; without it they are measured and "
      "shown only");
  command.add_flag("--remeasure", flags->remeasure,
                   "Measure again even when the DB has figures (replaces them)");
  command
      .add_option("--threads", flags->threads, "Threads to measure on (0: one per hardware thread)")
      ->capture_default_str();
  command
      .add_option("--seconds", flags->seconds,
                  cat("About how long the whole probe runs, in seconds (",
                      profiler::kMinProbeSeconds, "..", profiler::kMaxProbeSeconds, ")"))
      ->capture_default_str();
  command.add_option("--backend", flags->backend, "Backend whose device to measure")
      ->capture_default_str();

  return [flags] {
    if (flags->threads < 0 || flags->threads > profiler::kMaxProbeThreads)
      fail(ErrorKind::usage, "--threads must be in 0..", profiler::kMaxProbeThreads, ", got ",
           flags->threads);
    if (!(flags->seconds >= profiler::kMinProbeSeconds &&
          flags->seconds <= profiler::kMaxProbeSeconds))
      fail(ErrorKind::usage, "--seconds must be in ", profiler::kMinProbeSeconds, "..",
           profiler::kMaxProbeSeconds, ", got ", flags->seconds);
    const int threads = flags->threads > 0
                            ? flags->threads
                            : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    const auto peaks =
        local_peaks(flags->backend, flags->db_path, threads, flags->seconds, flags->remeasure);
    std::printf("%s, %d thread%s%s\n", peaks.front().cpu.c_str(), threads, threads == 1 ? "" : "s",
                flags->db_path.empty() ? " (not cached: no --db)"
                                       : (" (results DB " + flags->db_path + ")").c_str());
    std::printf("memory bandwidth (STREAM triad, best of several): %.1f GB/s\n",
                peaks.front().bandwidth_gbs);
    for (const profiler::MachinePeak& p : peaks) {
      std::printf("%-7s FMA %8.1f GFLOP/s measured", p.isa.c_str(), p.fma_gflops);
      if (p.theoretical_gflops > 0)
        std::printf(", %5.1f %% of theoretical %.1f GFLOP/s = %s%s",
                    100 * p.fma_gflops / p.theoretical_gflops, p.theoretical_gflops,
                    p.theoretical_basis.c_str(),
                    p.fma_gflops > p.theoretical_gflops
                        ? " (above it: the cores ran faster than the reported clock, or have more "
                          "FMA units than assumed)"
                        : "");
      std::printf("; measured %s\n", p.measured_at.c_str());
    }
    const auto best = profiler::machine_peak_for(peaks, peaks.front().cpu, threads);
    std::printf("ridge point (fastest path): %.1f FLOP/B\n", profiler::ridge_intensity(*best));
  };
}

}  // namespace tunescope::cli
