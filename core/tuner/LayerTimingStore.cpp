// Per-layer find timings through the results DB (see LayerTimingStore.h).
#include "core/tuner/LayerTimingStore.h"

#include "core/base/Error.h"

namespace tunescope::tuner {

LayerTimingStore::LayerTimingStore(ResultsDb& db, const MachineSignature& machine,
                                   std::string model)
    : db_(db), machine_(machine), model_(std::move(model)) {}

int64_t LayerTimingStore::machine_id() {
  if (!machine_id_) machine_id_ = db_.machine_id(machine_);
  return *machine_id_;
}

std::optional<AlgorithmTiming> LayerTimingStore::lookup(const ConvProblem& problem, int threads,
                                                        const std::string& algorithm,
                                                        int repetitions) {
  if (!error_.empty()) return std::nullopt;
  try {
    std::optional<AlgorithmTiming> found =
        db_.layer_timing(machine_id(), problem.key(), threads, algorithm, repetitions);
    if (found) ++reused_;
    return found;
  } catch (const Error& e) {
    error_ = e.what();
    return std::nullopt;
  }
}

void LayerTimingStore::store(const ConvProblem& problem, int threads, int repetitions,
                             const AlgorithmTiming& timing) {
  pending_.push_back({problem.key(), threads, repetitions, timing});
}

void LayerTimingStore::flush() {
  if (pending_.empty() || !error_.empty()) return pending_.clear();
  try {
    db_.add_layer_timings(machine_id(), pending_, model_);
    stored_ += pending_.size();
  } catch (const Error& e) {
    error_ = e.what();
  }
  pending_.clear();
}

}  // namespace tunescope::tuner
