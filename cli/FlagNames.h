// Core messages name config keys ("streams must be >= 1, got 0"); the CLI adds the flag
// that sets the key ("streams (--streams) must be >= 1, got 0"), so a user of either
// the config file or the command line sees the name they typed.
#pragma once

#include <string>

namespace tunescope::cli {

// `message` with the flag after a config key it starts with (a knob's key, its tune
// list's tuner::list_key, or one of kSessionOptionKeys or tuner::kTuneOptionKeys),
// followed by a space or a colon;
// unchanged when it starts with none.
std::string with_flag_names(const std::string& message);

}  // namespace tunescope::cli
