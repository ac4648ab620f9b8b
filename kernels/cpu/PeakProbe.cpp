#include "kernels/cpu/PeakProbe.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <latch>
#include <set>
#include <thread>
#include <utility>

#include "core/base/AlignedBuffer.h"
#include "core/base/Error.h"
#include "core/base/HostCpu.h"
#include "core/base/UtcTime.h"

namespace tunescope::cpu {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Runs work(thread) on `threads` threads released together; returns the wall time from
// their release to the last one's end.
template <class Work>
double run_together(int threads, Work work) {
  std::latch ready(threads + 1);
  std::atomic<int64_t> last_end{0};
  std::vector<std::thread> pool;
  pool.reserve(static_cast<size_t>(threads));
  Clock::time_point start;
  std::latch go(1);
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      ready.count_down();
      go.wait();
      work(t);
      const int64_t end = Clock::now().time_since_epoch().count();
      int64_t seen = last_end.load();
      while (end > seen && !last_end.compare_exchange_weak(seen, end)) {
      }
    });
  ready.arrive_and_wait();
  start = Clock::now();
  go.count_down();
  for (auto& thread : pool) thread.join();
  return std::chrono::duration<double>(Clock::duration(last_end.load()) - start.time_since_epoch())
      .count();
}

// Many short repetitions, the best one kept: on a shared machine the best is the one
// that had the cores to itself, which is what a peak means.
constexpr double kRepetitionSeconds = 0.005;
constexpr int kMinRepetitions = 5;

// "cpu MHz" of /proc/cpuinfo (the clock the kernel reports; turbo may run faster), 0 when absent.
double cpu_mhz() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);)
    if (line.rfind("cpu MHz", 0) == 0)
      if (auto colon = line.find(':'); colon != std::string::npos)
        return std::atof(line.c_str() + colon + 1);
  return 0;
}

// Physical cores: distinct (physical id, core id) pairs; hardware threads when absent.
int physical_cores() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::set<std::pair<std::string, std::string>> cores;
  std::string physical;
  for (std::string line; std::getline(cpuinfo, line);) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string value = line.substr(std::min(line.size(), colon + 2));
    if (line.rfind("physical id", 0) == 0) physical = value;
    if (line.rfind("core id", 0) == 0) cores.emplace(physical, value);
  }
  return cores.empty() ? static_cast<int>(std::max(1u, std::thread::hardware_concurrency()))
                       : static_cast<int>(cores.size());
}

bool amd_cpu() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);)
    if (line.rfind("vendor_id", 0) == 0) return line.find("AuthenticAMD") != std::string::npos;
  return false;
}

}  // namespace

const FmaChainKernel& fma_chain_kernel(CpuIsa isa) {
  switch (isa) {
    case CpuIsa::avx512: return kFmaChainAvx512;
    case CpuIsa::avx2: return kFmaChainAvx2;
    default: return kFmaChainScalar;
  }
}

double measure_fma_gflops(CpuIsa isa, int threads, double seconds) {
  if (!cpu_supports(isa))
    fail(ErrorKind::usage, "machine probe: this CPU cannot run the ", to_string(isa), " path");
  const FmaChainKernel& kernel = fma_chain_kernel(isa);
  // a < 1 keeps every chain bounded (it tends to b / (1 - a)), away from denormals.
  const float a = 0.999f, b = 0.001f;
  std::vector<double> sink(static_cast<size_t>(threads));
  // Calibrate on all threads, doubling until a run takes a millisecond or more.
  const auto start = Clock::now();
  int64_t iterations = 1024;
  double took = 0;
  while ((took = run_together(
              threads, [&](int t) { sink[t] += kernel.run(iterations, a, b, 1.0f + t); })) < 1e-3)
    iterations *= 2;
  iterations = std::max<int64_t>(
      1, static_cast<int64_t>(static_cast<double>(iterations) * kRepetitionSeconds / took));
  double best = 0;
  for (int rep = 0; rep < kMinRepetitions || seconds_since(start) < seconds; ++rep) {
    const double wall =
        run_together(threads, [&](int t) { sink[t] += kernel.run(iterations, a, b, 1.0f + t); });
    best = std::max(best, kernel.flops(iterations) * threads / wall / 1e9);
  }
  // The results are used, so no run can be dropped as dead code.
  volatile double keep = 0;
  for (double s : sink) keep = keep + s;
  return best;
}

size_t triad_array_bytes() {
  size_t largest = 0;
  for (int index = 0; index < 8; ++index) {
    std::ifstream size_file("/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) +
                            "/size");
    std::string text;
    if (!(size_file >> text) || text.empty()) continue;
    size_t bytes = std::strtoull(text.c_str(), nullptr, 10);
    if (text.back() == 'K') bytes <<= 10;
    if (text.back() == 'M') bytes <<= 20;
    largest = std::max(largest, bytes);
  }
  return std::clamp<size_t>(4 * largest, size_t{32} << 20, size_t{512} << 20);
}

double measure_triad_gbs(int threads, size_t array_bytes, double seconds) {
  const size_t n = array_bytes / sizeof(float);
  AlignedBuffer buffers[3] = {AlignedBuffer(n * sizeof(float)), AlignedBuffer(n * sizeof(float)),
                              AlignedBuffer(n * sizeof(float))};
  float* __restrict out = static_cast<float*>(buffers[0].data());
  float* __restrict b = static_cast<float*>(buffers[1].data());
  float* __restrict c = static_cast<float*>(buffers[2].data());
  const float s = 3.0f;
  const auto slice = [&](int t) {
    return std::pair{n * static_cast<size_t>(t) / static_cast<size_t>(threads),
                     n * static_cast<size_t>(t + 1) / static_cast<size_t>(threads)};
  };
  // Written with data first, by the thread that will stream each slice: untouched zeroed
  // pages would all read one shared zero page, from cache.
  run_together(threads, [&](int t) {
    const auto [begin, end] = slice(t);
    for (size_t i = begin; i < end; ++i)
      b[i] = 1.0f + static_cast<float>(i & 7), c[i] = 0.5f, out[i] = 0;
  });
  const auto triad = [&](int t) {
    const auto [begin, end] = slice(t);
    for (size_t i = begin; i < end; ++i) out[i] = b[i] + s * c[i];
  };
  const auto start = Clock::now();
  double best_wall = run_together(threads, triad);
  int reps = 0;
  while (reps < kMinRepetitions || seconds_since(start) + best_wall < seconds) {
    best_wall = std::min(best_wall, run_together(threads, triad));
    ++reps;
  }
  volatile float keep = out[n / 2];
  (void)keep;
  return 3.0 * static_cast<double>(n * sizeof(float)) / best_wall / 1e9;
}

TheoreticalPeak theoretical_fma_peak(CpuIsa isa, int threads) {
  const double mhz = cpu_mhz();
  if (mhz <= 0) return {};
  const int cores = std::min(threads, physical_cores());
  const FmaChainKernel& kernel = fma_chain_kernel(isa);
  // Two FMA pipes per core is what x86 cores since Haswell and Zen 1 have for 256 bits.
  // 512 bits: AMD (Zen 4) splits a 512-bit FMA over its two 256-bit pipes, so one per
  // cycle; Intel server cores have two 512-bit pipes (some parts one). Scalar: the pipes
  // take a mul or an add each.
  const bool split512 = isa == CpuIsa::avx512 && amd_cpu();
  const int units = split512 ? 1 : 2;
  TheoreticalPeak peak;
  peak.gflops = cores * units * kernel.lanes * 2.0 * mhz / 1e3;
  peak.basis = cat(cores, " core", cores == 1 ? "" : "s", " x ", units, " FMA unit",
                   units == 1 ? "" : "s", split512 ? " (AMD: 512 bits over two 256-bit pipes)" : "",
                   " (assumed) x ", kernel.lanes, " lane", kernel.lanes == 1 ? "" : "s", " x 2 x ",
                   mhz / 1e3, " GHz (cpu MHz: the clock the kernel reports; boost may run faster)");
  return peak;
}

std::vector<profiler::MachinePeak> measure_cpu_peaks(int threads, double seconds) {
  if (threads < 1 || threads > kMaxProbeThreads)
    fail(ErrorKind::usage, "machine probe: threads must be in 1..", kMaxProbeThreads, ", got ",
         threads);
  if (!(seconds >= kMinProbeSeconds && seconds <= kMaxProbeSeconds))
    fail(ErrorKind::usage, "machine probe: seconds must be in ", kMinProbeSeconds, "..",
         kMaxProbeSeconds, ", got ", seconds);
  const std::vector<CpuIsa> isas = supported_cpu_isas();
  // Half the time for the bandwidth, the rest shared by the FMA paths.
  const double bandwidth = measure_triad_gbs(threads, triad_array_bytes(), seconds / 2);
  std::vector<profiler::MachinePeak> peaks;
  for (CpuIsa isa : isas) {
    profiler::MachinePeak p;
    p.cpu = host_cpu_model();
    p.isa = to_string(isa);
    p.threads = threads;
    p.fma_gflops = measure_fma_gflops(isa, threads, seconds / 2 / static_cast<double>(isas.size()));
    p.bandwidth_gbs = bandwidth;
    const TheoreticalPeak theory = theoretical_fma_peak(isa, threads);
    p.theoretical_gflops = theory.gflops;
    p.theoretical_basis = theory.basis;
    p.measured_at = utc_now_iso8601();
    peaks.push_back(std::move(p));
  }
  return peaks;
}

}  // namespace tunescope::cpu
