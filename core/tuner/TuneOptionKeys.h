// The names core/tuner's messages give the tune's own settings, as kSessionOptionKeys
// (core/engine/TrainingSession.h) does for the session's: config keys, never a front
// end's flags. A front end shows its own name beside each (cli/FlagNames.h).
#pragma once

#include <array>
#include <string_view>

namespace tunescope::tuner {

inline constexpr std::array<std::string_view, 13> kTuneOptionKeys = {"steps",
                                                                     "max_steps",
                                                                     "delta",
                                                                     "max_timing_seconds",
                                                                     "warmup",
                                                                     "budget",
                                                                     "trial_timeout",
                                                                     "resume",
                                                                     "db",
                                                                     "prune_margin",
                                                                     "per_layer_product",
                                                                     "strategy",
                                                                     "algorithms"};

}  // namespace tunescope::tuner
