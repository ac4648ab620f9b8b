// Resolves `--backend auto` to a backend that can start on this machine: the first of
// the preference order (cuda, then cpu) whose factory constructs without an Error.
// Any other name is returned unchanged, so unknown names still fail in make_backend
// with the list of known ones.
#pragma once

#include <string>
#include <vector>

#include "core/base/Registry.h"

namespace tunescope {

inline constexpr const char* kAutoBackend = "auto";

struct BackendChoice {
  std::string name;
  // Why each preferred backend was passed over, e.g. "cuda: no CUDA device: ...".
  std::vector<std::string> passed_over;
};

// Throws Error(unsupported) listing every reason when no backend can start.
BackendChoice choose_backend(const std::string& requested,
                             const Registry& registry = Registry::instance());

}  // namespace tunescope
