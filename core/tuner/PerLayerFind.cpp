// Per-layer algorithm timing outside the network (see PerLayerFind.h).
#include "core/tuner/PerLayerFind.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <optional>

#include "core/base/AlignedBuffer.h"
#include "core/base/Backend.h"
#include "core/base/Error.h"
#include "core/base/Registry.h"
#include "core/base/ThreadPool.h"

namespace tunescope::tuner {

namespace {

// Inputs, filters and gradients of one layer, filled with a fixed pseudo-random pattern,
// in `memory` (the backend's).
struct LayerTensors {
  Tensor x, w, dy;
  explicit LayerTensors(const ConvProblem& p, MemorySpace& memory = host_memory())
      : x(p.input, p.layout), w(p.filter(), p.layout), dy(p.output(), p.layout) {
    uint32_t state = 12345;
    for (Tensor* t : {&x, &w, &dy}) {
      for (int64_t i = 0; i < t->size(); ++i) {
        state = state * 1664525u + 1013904223u;
        t->data()[i] = static_cast<float>(state >> 8) / static_cast<float>(1u << 24) - 0.5f;
      }
      if (&memory != &t->memory()) *t = to_memory(*t, memory);
    }
  }
};

struct Outputs {
  Tensor y, dx, dw;
  Outputs(const ConvProblem& p, MemorySpace& memory = host_memory())
      : y(p.output(), p.layout, memory), dx(p.input, p.layout, memory), dw(p.filter(), p.layout, memory) {}
};

double relative_error(const Tensor& got, const Tensor& want) {
  if (!got.on_host()) return relative_error(to_host(got), want);
  double scale = 0, error = 0;
  for (int64_t i = 0; i < want.size(); ++i) {
    scale = std::max(scale, static_cast<double>(std::abs(want.data()[i])));
    const double diff = std::abs(static_cast<double>(got.data()[i]) - want.data()[i]);
    error = std::isnan(diff) ? INFINITY : std::max(error, diff);
  }
  return error / std::max(scale, 1e-12);
}

}  // namespace

std::vector<LayerFind> find_per_layer(const SearchSpace& space, Layout layout, int threads,
                                      const FindOptions& options) {
  const std::string& backend_name = space.options().backend;
  const std::unique_ptr<Backend> backend = Registry::instance().make_backend(backend_name);
  MemorySpace& memory = backend->memory();
  ThreadPool pool(threads);
  const ExecContext host_exec{pool, nullptr, 0, 0};
  const ExecContext exec{pool, nullptr, 0, 0, backend->lane_stream(0, 0)};
  std::vector<LayerFind> out;
  std::map<std::string, size_t> timed;  // problem key -> the find of the first layer with it
  for (const ConvLayerInfo& layer : space.layers()) {
    ConvProblem problem = layer.problem;
    problem.layout = layout;
    if (auto same = timed.find(problem.key()); same != timed.end()) {
      LayerFind find = out[same->second];
      find.layer = layer.name;
      find.timed_as = out[same->second].layer;
      out.push_back(std::move(find));
      continue;
    }
    timed.emplace(problem.key(), out.size());
    LayerFind find{layer.name, layout, threads, {}, {}, {}};
    // Made on first need: a layer whose timings all come from options.cache needs none.
    std::optional<LayerTensors> in;
    // The CPU's `direct` on the same inputs is the reference every algorithm must match.
    std::optional<Outputs> reference;
    auto prepare = [&] {
      if (reference) return;
      const LayerTensors host_in(problem);
      in.emplace(problem, memory);
      reference.emplace(problem);
      auto direct = Registry::instance().make_conv_algorithm("cpu", "direct");
      AlignedBuffer workspace(direct->workspace_bytes(problem));
      const ConvCall call{problem, host_exec, workspace.data(), workspace.bytes()};
      direct->forward(call, host_in.x, host_in.w, reference->y);
      direct->backward_data(call, host_in.dy, host_in.w, reference->dx);
      direct->backward_filter(call, host_in.x, host_in.dy, reference->dw);
    };
    double best_ms = INFINITY;
    for (const std::string& name : space.algorithms()) {
      AlgorithmTiming timing{name, 0, space.unsupported_reason(layer, layout, name), {}, false};
      std::optional<AlgorithmTiming> cached;
      if (timing.skip_reason.empty() && options.cache) cached = options.cache->lookup(problem, threads, name, std::max(1, options.repetitions));
      if (cached) {
        timing = std::move(*cached);
        timing.reused = true;
      } else if (timing.skip_reason.empty()) {
        try {
          prepare();
          auto algorithm = Registry::instance().make_conv_algorithm(backend_name, name);
          AlignedBuffer workspace(algorithm->workspace_bytes(problem), memory);
          const ConvCall call{problem, exec, workspace.data(), workspace.bytes()};
          Outputs got(problem, memory);
          // Each pass is timed alone (ms), to its end on a device.
          std::array<double, 3> pass_ms{};
          auto run_all = [&] {
            const auto timed = [&](int pass, auto&& run) {
              const auto start = std::chrono::steady_clock::now();
              run();
              backend->finish_stream(exec.stream);
              pass_ms[pass] = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
            };
            timed(0, [&] { algorithm->forward(call, in->x, in->w, got.y); });
            timed(1, [&] { algorithm->backward_data(call, in->dy, in->w, got.dx); });
            timed(2, [&] { algorithm->backward_filter(call, in->x, in->dy, got.dw); });
          };
          run_all();  // first run: plans, caches, page faults; also the one checked
          const double err = std::max({relative_error(got.y, reference->y), relative_error(got.dx, reference->dx),
                                       relative_error(got.dw, reference->dw)});
          if (!(err <= options.tolerance)) {
            timing.skip_reason = cat("wrong results: relative error ", err, " vs direct (tolerance ", options.tolerance, ")");
          } else {
            std::vector<double> ms;
            std::array<std::vector<double>, 3> passes;
            for (int r = 0; r < std::max(1, options.repetitions); ++r) {
              run_all();
              ms.push_back(pass_ms[0] + pass_ms[1] + pass_ms[2]);
              for (int p = 0; p < 3; ++p) passes[p].push_back(pass_ms[p]);
            }
            const auto median = [](std::vector<double> v) {
              std::sort(v.begin(), v.end());
              return v[v.size() / 2];
            };
            timing.median_ms = median(ms);
            // Each pass's fastest run: other processes only ever add time, and the
            // predictor sums the passes of many layers, so their noise would add up.
            const auto fastest = [](const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); };
            timing.passes = {fastest(passes[0]), fastest(passes[1]), fastest(passes[2])};
            if (options.cache) options.cache->store(problem, threads, std::max(1, options.repetitions), timing);
          }
        } catch (const std::exception& e) {
          timing.skip_reason = cat("failed: ", e.what());
        }
      }
      if (timing.skip_reason.empty() && timing.median_ms < best_ms) {
        best_ms = timing.median_ms;
        find.best = name;
      }
      find.timings.push_back(std::move(timing));
    }
    if (find.best.empty())
      fail(ErrorKind::runtime, "per-layer find: no algorithm passed for layer ", layer.name, " (", problem.key(), ")");
    out.push_back(std::move(find));
  }
  if (options.cache) options.cache->flush();
  return out;
}

}  // namespace tunescope::tuner
