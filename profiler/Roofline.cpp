#include "profiler/Roofline.h"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <tuple>

#include <nlohmann/json.hpp>

namespace tunescope::profiler {

std::optional<MachinePeak> machine_peak_for(const std::vector<MachinePeak>& peaks,
                                            const std::string& cpu, int threads) {
  std::optional<MachinePeak> best;
  for (const MachinePeak& p : peaks)
    if (p.cpu == cpu && p.threads == threads && (!best || p.fma_gflops > best->fma_gflops))
      best = p;
  return best;
}

std::string conv_layers_to_json(const std::vector<ConvLayerInfo>& layers) {
  nlohmann::json out = nlohmann::json::array();
  for (const ConvLayerInfo& l : layers)
    out.push_back({{"layer", l.layer},
                   {"algorithm", l.algorithm},
                   {"problem", l.problem},
                   {"flops_per_pass", l.flops_per_pass},
                   {"min_bytes_per_pass", l.min_bytes_per_pass}});
  return out.dump();
}

std::vector<ConvLayerInfo> conv_layers_of(const TraceMetadata& metadata) {
  const auto entry = metadata.extra.find(kConvLayersKey);
  if (entry == metadata.extra.end()) return {};
  std::vector<ConvLayerInfo> layers;
  try {
    for (const auto& l : nlohmann::json::parse(entry->second)) {
      ConvLayerInfo info{l.at("layer").get<std::string>(), l.at("algorithm").get<std::string>(),
                         l.value("problem", std::string()), l.at("flops_per_pass").get<double>(),
                         l.value("min_bytes_per_pass", 0.0)};
      if (info.flops_per_pass < 0 || info.min_bytes_per_pass < 0)
        throw std::invalid_argument("negative count");
      layers.push_back(std::move(info));
    }
  } catch (const std::exception& e) {
    throw std::invalid_argument(std::string("trace metadata '") + kConvLayersKey +
                                "': " + e.what());
  }
  return layers;
}

namespace {

// The pass a kernel of `algorithm` belongs to ("gemm.bwd_data.col2im" -> "bwd_data"),
// or empty when the name is not one of its kernels.
std::string pass_of(const std::string& kernel, const std::string& algorithm) {
  if (kernel.size() <= algorithm.size() + 1 ||
      kernel.compare(0, algorithm.size(), algorithm) != 0 || kernel[algorithm.size()] != '.')
    return {};
  const size_t start = algorithm.size() + 1;
  const std::string pass = kernel.substr(start, kernel.find('.', start) - start);
  for (const char* known : kConvPassNames)
    if (pass == known) return pass;
  return {};
}

// One call of one pass of one conv layer: the kernels it ran.
struct PassCall {
  size_t layer = 0;  // index into the layers
  std::string pass;
  int64_t total_ns = 0;
  std::vector<const Activity*> kernels;
};

// Every pass call of the trace's conv layers, in no particular order. Layer ranges do
// not nest in each other, so the one enclosing a kernel is the last to start before it
// on its lane.
std::vector<PassCall> pass_calls(const Trace& trace, const std::vector<ConvLayerInfo>& layers) {
  std::map<std::string, size_t> layer_index;
  for (size_t i = 0; i < layers.size(); ++i) layer_index.emplace(layers[i].layer, i);
  // Per (device, lane): the conv layer ranges, by start.
  std::map<std::pair<int, int>, std::vector<const Range*>> lane_ranges;
  for (const Range& r : trace.ranges)
    if (r.category == RangeCategory::layer && layer_index.count(r.name))
      lane_ranges[{r.device, r.lane}].push_back(&r);
  for (auto& [lane, ranges] : lane_ranges)
    std::stable_sort(ranges.begin(), ranges.end(),
                     [](const Range* a, const Range* b) { return a->start_ns < b->start_ns; });

  std::map<std::tuple<const Range*, std::string>, PassCall> calls;
  for (const Activity& a : trace.activities) {
    if (a.kind != ActivityKind::kernel) continue;
    const auto lane = lane_ranges.find({a.device, a.stream});
    if (lane == lane_ranges.end()) continue;
    const auto& ranges = lane->second;
    auto after = std::upper_bound(ranges.begin(), ranges.end(), a.start_ns,
                                  [](int64_t t, const Range* r) { return t < r->start_ns; });
    if (after == ranges.begin()) continue;
    const Range* range = *std::prev(after);
    if (a.end_ns > range->end_ns) continue;
    const size_t layer = layer_index.at(range->name);
    const std::string pass = pass_of(a.name, layers[layer].algorithm);
    if (pass.empty()) continue;
    PassCall& call = calls[{range, pass}];
    call.layer = layer;
    call.pass = pass;
    call.total_ns += a.duration_ns();
    call.kernels.push_back(&a);
  }
  std::vector<PassCall> out;
  for (auto& [key, call] : calls) out.push_back(std::move(call));
  return out;
}

size_t pass_index(const std::string& pass) {
  for (size_t i = 0; i < std::size(kConvPassNames); ++i)
    if (pass == kConvPassNames[i]) return i;
  return std::size(kConvPassNames);
}

}  // namespace

std::vector<ConvPassRate> conv_pass_rates(const Trace& trace,
                                          const std::vector<ConvLayerInfo>& layers) {
  std::map<std::pair<size_t, size_t>, ConvPassRate> rows;
  for (const PassCall& call : pass_calls(trace, layers)) {
    const ConvLayerInfo& info = layers[call.layer];
    ConvPassRate& row = rows[{call.layer, pass_index(call.pass)}];
    row.layer = info.layer;
    row.algorithm = info.algorithm;
    row.pass = call.pass;
    row.calls += 1;
    row.total_ns += call.total_ns;
    row.flops += info.flops_per_pass;
    row.intensity = info.min_bytes_per_pass > 0 ? info.flops_per_pass / info.min_bytes_per_pass : 0;
  }
  std::vector<ConvPassRate> out;
  for (auto& [key, row] : rows) {
    row.gflops =
        row.total_ns > 0 ? row.flops / static_cast<double>(row.total_ns) : 0;  // flop/ns = GFLOP/s
    out.push_back(std::move(row));
  }
  return out;
}

std::vector<KernelPassRate> kernel_pass_rates(const Trace& trace,
                                              const std::vector<ConvLayerInfo>& layers) {
  std::map<std::string, std::pair<double, int64_t>> by_name;  // attributed flops, time
  for (const PassCall& call : pass_calls(trace, layers)) {
    const double flops = layers[call.layer].flops_per_pass;
    for (const Activity* a : call.kernels) {
      auto& [f, ns] = by_name[a->name];
      if (call.total_ns > 0)
        f += flops * static_cast<double>(a->duration_ns()) / static_cast<double>(call.total_ns);
      ns += a->duration_ns();
    }
  }
  std::vector<KernelPassRate> out;
  for (const auto& [name, totals] : by_name)
    out.push_back(
        {name, totals.second > 0 ? totals.first / static_cast<double>(totals.second) : 0});
  return out;
}

double ridge_intensity(const MachinePeak& peak) {
  return peak.bandwidth_gbs > 0 ? peak.fma_gflops / peak.bandwidth_gbs : 0;
}

}  // namespace tunescope::profiler
