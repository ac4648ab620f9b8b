// `tunescope list-algorithms [--backend NAME]`: every backend (or the one named) with
// its device and its registered convolution algorithms. A backend that cannot start here
// (cuda without a device) is still listed, with the reason, so its algorithm names can
// be looked up on any machine.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli/Commands.h"
#include "core/base/BackendChoice.h"
#include "core/base/Error.h"
#include "core/base/Registry.h"

namespace tunescope::cli {

namespace {

// The backends to list: all, or the one named (auto resolves as it does for train).
std::vector<std::string> backends_to_list(const Registry& registry, const std::string& requested) {
  const std::vector<std::string> known = registry.backends();
  if (requested.empty()) return known;
  const std::string name =
      requested == kAutoBackend ? choose_backend(requested, registry).name : requested;
  for (const std::string& backend : known)
    if (backend == name) return {name};
  std::string list;
  for (const std::string& backend : known) list += (list.empty() ? "" : ", ") + backend;
  fail(ErrorKind::usage, "list-algorithms --backend: unknown backend '", requested,
       "' (known: ", list, ", auto)");
}

}  // namespace

Action add_list_algorithms_command(CLI::App& command) {
  auto backend = std::make_shared<std::string>();
  command.add_option("--backend", *backend,
                     "Only this backend: cpu | cuda | auto (default: every backend)");
  return [backend] {
    const Registry& registry = Registry::instance();
    for (const std::string& name : backends_to_list(registry, *backend)) {
      std::string description;
      try {
        description = registry.make_backend(name)->device_description();
      } catch (const Error& e) {
        description = cat("unavailable: ", e.what());
      }
      std::printf("backend %s: %s\n", name.c_str(), description.c_str());
      for (const std::string& algorithm : registry.conv_algorithms(name))
        std::printf("  conv %s\n", algorithm.c_str());
    }
  };
}

}  // namespace tunescope::cli
