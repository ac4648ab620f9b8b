// Step-time prediction from the per-layer find and one reference trace (see StepTimePredictor.h).
#include "core/tuner/StepTimePredictor.h"

#include <algorithm>
#include <set>

#include "core/base/Error.h"
#include "core/base/Knob.h"
#include "core/engine/RunKnobs.h"

namespace tunescope::tuner {

namespace {

using profiler::Activity;
using profiler::ActivityKind;
using profiler::Range;
using profiler::RangeCategory;

constexpr const char* kPassNames[3] = {"fwd", "bwd_data", "bwd_filter"};

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

// The range of `sorted` (by start, not overlapping each other) that contains [start, end], if any.
const Range* enclosing(const std::vector<const Range*>& sorted, int64_t start, int64_t end) {
  auto it = std::upper_bound(sorted.begin(), sorted.end(), start,
                             [](int64_t t, const Range* r) { return t < r->start_ns; });
  if (it == sorted.begin()) return nullptr;
  const Range* r = *(it - 1);
  return r->start_ns <= start && end <= r->end_ns ? r : nullptr;
}

// The pass of a conv algorithm's kernel `<algorithm>.<pass>[.step]`, -1 when the name is not one.
int pass_of(const std::string& kernel, const std::string& algorithm) {
  if (kernel.size() <= algorithm.size() + 1 ||
      kernel.compare(0, algorithm.size(), algorithm) != 0 || kernel[algorithm.size()] != '.')
    return -1;
  const std::string rest = kernel.substr(algorithm.size() + 1);
  const std::string pass = rest.substr(0, rest.find('.'));
  for (int p = 0; p < 3; ++p)
    if (pass == kPassNames[p]) return p;
  return -1;
}

double pass_ms(const PassTimes& t, int pass) {
  return pass == 0 ? t.fwd_ms : pass == 1 ? t.bwd_data_ms : t.bwd_filter_ms;
}

void add_pass_ms(PassTimes& t, int pass, double ms) {
  (pass == 0 ? t.fwd_ms : pass == 1 ? t.bwd_data_ms : t.bwd_filter_ms) += ms;
}

}  // namespace

ReferenceProfile profile_reference(const profiler::Trace& trace,
                                   const std::vector<std::string>& conv_layers,
                                   const std::string& algorithm, Layout layout, int threads) {
  ReferenceProfile profile;
  profile.layout = layout;
  profile.threads = threads;
  profile.algorithm = algorithm;
  const std::set<std::string> conv_names(conv_layers.begin(), conv_layers.end());
  std::vector<const Range*> steps;
  std::map<int, std::vector<const Range*>> conv_ranges;  // lane -> the conv layers' ranges
  for (const Range& r : trace.ranges) {
    if (r.category == RangeCategory::iteration && r.name == "train_step") steps.push_back(&r);
    if (r.category == RangeCategory::layer && conv_names.count(r.name))
      conv_ranges[r.lane].push_back(&r);
  }
  auto by_start = [](const Range* a, const Range* b) { return a->start_ns < b->start_ns; };
  std::sort(steps.begin(), steps.end(), by_start);
  for (auto& [lane, ranges] : conv_ranges) std::sort(ranges.begin(), ranges.end(), by_start);
  if (steps.empty()) fail(ErrorKind::input, "reference trace: no train_step iteration");

  std::vector<double> conv(steps.size()), other(steps.size());
  std::map<std::string, PassTimes> layer_ns;
  for (const Activity& a : trace.activities) {
    if (a.kind != ActivityKind::kernel) continue;
    const Range* step = enclosing(steps, a.start_ns, a.end_ns);
    if (!step) continue;  // outside the training steps (an evaluation)
    const size_t s =
        static_cast<size_t>(std::find(steps.begin(), steps.end(), step) - steps.begin());
    const double ms = static_cast<double>(a.duration_ns()) * 1e-6;
    const int pass = pass_of(a.name, algorithm);
    const auto lane = conv_ranges.find(a.stream);
    const Range* layer = pass >= 0 && lane != conv_ranges.end()
                             ? enclosing(lane->second, a.start_ns, a.end_ns)
                             : nullptr;
    if (layer) {
      conv[s] += ms;
      profile.passes[layer->name][static_cast<size_t>(pass)] = true;
      add_pass_ms(layer_ns[layer->name], pass, ms);
    } else {
      other[s] += ms;
    }
  }
  for (const std::string& name : conv_layers)
    if (!profile.passes.count(name))
      fail(ErrorKind::input, "reference trace: no ", algorithm, " kernel in conv layer ", name);
  std::vector<double> durations, idle;
  for (size_t s = 0; s < steps.size(); ++s) {
    const double ms = static_cast<double>(steps[s]->end_ns - steps[s]->start_ns) * 1e-6;
    durations.push_back(ms);
    idle.push_back(std::max(0.0, ms - conv[s] - other[s]));
  }
  profile.steps = static_cast<int64_t>(steps.size());
  profile.step_ms = median(durations);
  profile.conv_ms = median(conv);
  // The least over the steps, as the find keeps each pass's fastest run: other
  // processes only add time (a preempted step's gap, a slowed kernel).
  profile.non_conv_ms = *std::min_element(other.begin(), other.end());
  profile.idle_ms = *std::min_element(idle.begin(), idle.end());
  for (auto& [name, t] : layer_ns)
    profile.conv_layer_ms[name] = {t.fwd_ms / profile.steps, t.bwd_data_ms / profile.steps,
                                   t.bwd_filter_ms / profile.steps};
  return profile;
}

StepTimePredictor::StepTimePredictor(ReferenceProfile reference, std::vector<LayerFind> finds)
    : reference_(std::move(reference)) {
  for (LayerFind& f : finds) {
    auto key = std::tuple(f.layer, f.layout, f.threads);
    finds_.insert_or_assign(std::move(key), std::move(f));
  }
}

const AlgorithmTiming* StepTimePredictor::timing(const std::string& layer, Layout layout,
                                                 int threads, const std::string& algorithm) const {
  const auto find = finds_.find(std::tuple(layer, layout, threads));
  if (find == finds_.end()) return nullptr;
  for (const AlgorithmTiming& t : find->second.timings)
    if (t.algorithm == algorithm && t.skip_reason.empty()) return &t;
  return nullptr;
}

double StepTimePredictor::layer_ms(const std::string& layer, const AlgorithmTiming& timing) const {
  const auto passes = reference_.passes.find(layer);
  double ms = 0;
  for (int p = 0; p < 3; ++p)
    if (passes == reference_.passes.end() || passes->second[static_cast<size_t>(p)])
      ms += pass_ms(timing.passes, p);
  return ms;
}

std::optional<double> StepTimePredictor::thread_scale(int threads) const {
  if (threads == reference_.threads) return 1.0;
  double at_threads = 0, at_reference = 0;
  for (const auto& [layer, passes] : reference_.passes)
    for (const auto& [key, find] : finds_) {
      if (std::get<0>(key) != layer || std::get<1>(key) != reference_.layout ||
          std::get<2>(key) != threads)
        continue;
      for (const AlgorithmTiming& t : find.timings) {
        const AlgorithmTiming* ref =
            timing(layer, reference_.layout, reference_.threads, t.algorithm);
        if (!t.skip_reason.empty() || !ref) continue;
        at_threads += layer_ms(layer, t);
        at_reference += layer_ms(layer, *ref);
      }
    }
  if (!(at_reference > 0)) return std::nullopt;
  return at_threads / at_reference;
}

StepPrediction StepTimePredictor::predict(const RunConfig& config) const {
  StepPrediction out;
  for (const KnobSpec& spec : KnobCatalog::instance().specs())
    if (spec.key != knobs::layout.key() && spec.key != knobs::threads.key() &&
        config.knobs.differs_from_default(spec.key)) {
      out.unpredictable = cat(spec.key, " ", config.knobs.text(spec.key),
                              " is not its default: the find times no such run");
      return out;
    }
  const Layout layout = config.layout();
  const int threads = config.threads();
  const std::optional<double> scale = thread_scale(threads);
  if (!scale) {
    out.unpredictable =
        cat("the find has no timing at ", threads, " threads to scale the other kernels by");
    return out;
  }
  for (const auto& [layer, passes] : reference_.passes) {
    const std::string& algorithm = config.conv.for_layer(layer);
    const std::string name = algorithm.empty() ? reference_.algorithm : algorithm;
    const AlgorithmTiming* t = timing(layer, layout, threads, name);
    if (!t) {
      out = {};
      out.unpredictable = cat("the find has no timing of ", name, " on ", layer, " in ",
                              to_string(layout), " at ", threads, " threads");
      return out;
    }
    out.conv_ms += layer_ms(layer, *t);
  }
  out.non_conv_ms = reference_.non_conv_ms * *scale;
  out.idle_ms = reference_.idle_ms;
  out.step_ms = out.conv_ms + out.non_conv_ms + out.idle_ms;
  return out;
}

}  // namespace tunescope::tuner
