// The flag of a config key a core message starts with (FlagNames.h).
#include "cli/FlagNames.h"

#include <utility>
#include <vector>

#include "core/base/Knob.h"
#include "core/engine/TrainingSession.h"
#include "core/tuner/KnobLists.h"
#include "core/tuner/TuneOptionKeys.h"

namespace tunescope::cli {

std::string with_flag_names(const std::string& message) {
  std::vector<std::pair<std::string, std::string>> keys;
  for (const std::string_view key : kSessionOptionKeys) keys.emplace_back(key, option_flag(key));
  for (const std::string_view key : tuner::kTuneOptionKeys)
    keys.emplace_back(key, option_flag(key));
  for (const KnobSpec& spec : KnobCatalog::instance().specs()) {
    keys.emplace_back(spec.key, spec.flag());
    keys.emplace_back(tuner::list_key(spec), spec.list_flag());
  }
  for (const auto& [key, flag] : keys)
    if (message.size() > key.size() && message.compare(0, key.size(), key) == 0 &&
        (message[key.size()] == ' ' || message[key.size()] == ':')) {
      std::string named = key;
      named.append(" (").append(flag).append(")").append(message, key.size());
      return named;
    }
  return message;
}

}  // namespace tunescope::cli
