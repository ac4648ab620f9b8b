// Per-layer find timings through the results DB (see LayerTimingStore.h).
#include "core/tuner/LayerTimingStore.h"

namespace tunescope::tuner {

LayerTimingStore::LayerTimingStore(ResultsDb& db, const MachineSignature& machine, std::string model)
    : db_(db), machine_id_(db.machine_id(machine)), model_(std::move(model)) {}

std::optional<AlgorithmTiming> LayerTimingStore::lookup(const ConvProblem& problem, int threads,
                                                        const std::string& algorithm, int repetitions) {
  std::optional<AlgorithmTiming> found = db_.layer_timing(machine_id_, problem.key(), threads, algorithm, repetitions);
  if (found) ++reused_;
  return found;
}

void LayerTimingStore::store(const ConvProblem& problem, int threads, int repetitions, const AlgorithmTiming& timing) {
  db_.add_layer_timing(machine_id_, problem.key(), threads, repetitions, timing, model_);
  ++stored_;
}

}  // namespace tunescope::tuner
