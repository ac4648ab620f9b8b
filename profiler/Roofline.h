// The roofline of a trace's convolutions: each conv layer's passes as effective GFLOP/s
// (the problem's direct-convolution flop count over the time of the pass's kernels)
// against the machine's measured FMA peak and memory bandwidth. Plain data and pure
// functions: the engine writes the conv layers into the trace metadata, the machine
// probe (core/base/Backend.h) measures the peaks, the results DB caches them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "profiler/Trace.h"

namespace tunescope::profiler {

// One measurement of the machine probe: fp32 FMA throughput of one instruction-set path
// on `threads` threads, and STREAM-triad memory bandwidth on as many.
struct MachinePeak {
  std::string cpu;  // /proc/cpuinfo model name
  std::string isa;  // "scalar", "avx2", "avx512"
  int threads = 0;
  double fma_gflops = 0;     // measured
  double bandwidth_gbs = 0;  // measured (1 GB = 1e9 bytes)
  // cores x FMA units x vector width x 2 x clock, 0 when unknown; basis says which
  // figures it took (and which of them are assumed rather than read from the machine).
  double theoretical_gflops = 0;
  std::string theoretical_basis;
  std::string measured_at;  // UTC, ISO 8601
};

// The probe's bounds, checked before it runs: threads, and about how long it may take.
inline constexpr int kMaxProbeThreads = 1024;
inline constexpr double kMinProbeSeconds = 0.2;
inline constexpr double kMaxProbeSeconds = 120;

// The peak a trace's kernels are held against: the fastest path's (highest FMA figure)
// among `peaks` for this CPU and thread count; none when none was measured.
std::optional<MachinePeak> machine_peak_for(const std::vector<MachinePeak>& peaks,
                                            const std::string& cpu, int threads);

// One convolution layer of the traced model, as its trace metadata records it.
struct ConvLayerInfo {
  std::string layer;          // the name of its layer ranges
  std::string algorithm;      // its kernels are named "<algorithm>.<pass>[.<step>]"
  std::string problem;        // ConvProblem::key()
  double flops_per_pass = 0;  // 2 x multiply-adds of one pass over the whole problem
  // What one pass must move at least: input, filter and output (or their gradients)
  // once each, in bytes; 0 when unknown.
  double min_bytes_per_pass = 0;
};

// Trace-metadata keys: the conv layers (a JSON array), the host CPU's model name and
// the threads each lane's kernels ran on.
inline constexpr const char* kConvLayersKey = "conv_layers";
inline constexpr const char* kHostCpuKey = "host_cpu";
inline constexpr const char* kKernelThreadsKey = "kernel_threads";

std::string conv_layers_to_json(const std::vector<ConvLayerInfo>& layers);
// Empty when the metadata has none (a foreign trace). Throws std::invalid_argument
// naming the key when the entry does not parse.
std::vector<ConvLayerInfo> conv_layers_of(const TraceMetadata& metadata);

// The three passes as kernel names spell them.
inline constexpr const char* kConvPassNames[] = {"fwd", "bwd_data", "bwd_filter"};

struct ConvPassRate {
  std::string layer;
  std::string algorithm;
  std::string pass;      // one of kConvPassNames
  size_t calls = 0;      // layer ranges that ran this pass
  int64_t total_ns = 0;  // summed time of the pass's kernels in them
  double flops = 0;      // calls x flops_per_pass
  double gflops = 0;     // flops / total time
  double intensity = 0;  // flops per compulsory byte; 0 when unknown
};

// One row per (conv layer, pass) that ran: the kernels named "<algorithm>.<pass>..."
// recorded on a layer range of that layer's name (same device and lane, within its
// time). Rows in the order of `layers`, passes in kConvPassNames order.
std::vector<ConvPassRate> conv_pass_rates(const Trace& trace,
                                          const std::vector<ConvLayerInfo>& layers);

// Per kernel name: the effective GFLOP/s of the conv passes its calls took part in (each
// pass's flops shared out over its kernels in proportion to their time, so every
// kernel of one pass shows that pass's rate). Only conv kernels have an entry.
struct KernelPassRate {
  std::string name;
  double gflops = 0;
};
std::vector<KernelPassRate> kernel_pass_rates(const Trace& trace,
                                              const std::vector<ConvLayerInfo>& layers);

// Where the roofline of a kernel with this intensity bends: FLOP per byte at which the
// bandwidth roof meets the compute roof.
double ridge_intensity(const MachinePeak& peak);

}  // namespace tunescope::profiler
