// `tunescope list-algorithms`: every backend with its device and its registered
// convolution algorithms.
#include <cstdio>

#include "cli/Commands.h"
#include "core/base/Error.h"
#include "core/base/Registry.h"

namespace tunescope::cli {

Action add_list_algorithms_command(CLI::App&) {
  return [] {
    const Registry& registry = Registry::instance();
    for (const std::string& backend : registry.backends()) {
      // A registered backend may be unable to start here (cuda without a device): say why.
      std::string description;
      try {
        description = registry.make_backend(backend)->device_description();
      } catch (const Error& e) {
        description = cat("unavailable: ", e.what());
      }
      std::printf("backend %s: %s\n", backend.c_str(), description.c_str());
      for (const std::string& algorithm : registry.conv_algorithms(backend))
        std::printf("  conv %s\n", algorithm.c_str());
    }
  };
}

}  // namespace tunescope::cli
