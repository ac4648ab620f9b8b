#include "profiler/CoreDistanceProbes.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace tunescope::profiler {

namespace {

std::string ns_text(double ns) { return std::to_string(std::lround(ns)) + " ns"; }

// The watch's probes that ran (end_ns 0: not yet).
std::pair<double, double> probe_range(const CoreDistanceWatch& watch) {
  if (watch.end_ns <= 0) return {watch.start_ns, watch.start_ns};
  return std::minmax(watch.start_ns, watch.end_ns);
}

// Probes from `low` to `high` ns are of two states.
bool two_states(double low, double high) { return low > 0 && high >= kCoresMovedRatio * low; }

}  // namespace

bool CoreDistanceWatch::moved() const {
  const auto [low, high] = probe_range(*this);
  return end_ns > 0 && two_states(low, high);
}

std::string CoreDistanceWatch::range_text() const {
  const auto [low, high] = probe_range(*this);
  return std::to_string(std::lround(low)) + "-" + std::to_string(std::lround(high)) + " ns";
}

std::string CoreDistanceWatch::describe(const std::string& what) const {
  std::string probes = "a cache line went from CPU " + std::to_string(cpu_a) + " to CPU " +
                       std::to_string(cpu_b) + " and back in " + ns_text(start_ns) + " when the " +
                       what + " started";
  if (end_ns > 0) probes += " and " + ns_text(end_ns) + " when it ended";
  if (!moved()) return probes;
  return probes + ": the host moved these CPUs " +
         (end_ns > start_ns ? "farther apart" : "closer together") + " during the " + what +
         ", and two-thread steps are slower while they are far apart, so its two-thread steps "
         "may have run in either state: run the " +
         what + " again to confirm";
}

std::string core_distance_to_text(const CoreDistanceWatch& watch) {
  std::ostringstream text;
  text << watch.cpu_a << ' ' << watch.cpu_b << ' ' << std::lround(watch.start_ns) << ' '
       << std::lround(watch.end_ns);
  return text.str();
}

std::optional<CoreDistanceWatch> core_distance_from_text(const std::string& text) {
  std::istringstream in(text);
  CoreDistanceWatch watch;
  if (!(in >> watch.cpu_a >> watch.cpu_b >> watch.start_ns >> watch.end_ns)) return std::nullopt;
  std::string rest;
  if (in >> rest) return std::nullopt;
  if (watch.cpu_a < 0 || watch.cpu_b < 0 || watch.start_ns <= 0 || watch.end_ns <= 0)
    return std::nullopt;
  return watch;
}

nlohmann::json core_distance_to_json(const CoreDistanceWatch& watch) {
  return {{"cpus", {watch.cpu_a, watch.cpu_b}},
          {"start_ns", watch.start_ns},
          {"end_ns", watch.end_ns},
          {"moved", watch.moved()}};
}

std::optional<CoreDistanceWatch> core_distance_of(const Trace& trace) {
  const auto text = trace.metadata.extra.find(kCoreDistanceKey);
  if (text == trace.metadata.extra.end()) return std::nullopt;
  return core_distance_from_text(text->second);
}

bool different_core_states(const CoreDistanceWatch& a, const CoreDistanceWatch& b) {
  const auto [a_low, a_high] = probe_range(a);
  const auto [b_low, b_high] = probe_range(b);
  return two_states(std::min(a_low, b_low), std::max(a_high, b_high));
}

}  // namespace tunescope::profiler
