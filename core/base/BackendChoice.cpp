#include "core/base/BackendChoice.h"

#include <algorithm>

#include "core/base/Error.h"

namespace tunescope {

namespace {
// Fastest first. Backends registered under other names come after, alphabetically.
constexpr const char* kPreference[] = {"cuda", "cpu"};
}  // namespace

BackendChoice choose_backend(const std::string& requested, const Registry& registry) {
  if (requested != kAutoBackend) return {requested, {}};

  std::vector<std::string> order;
  const std::vector<std::string> known = registry.backends();
  for (const char* name : kPreference)
    if (std::find(known.begin(), known.end(), name) != known.end()) order.push_back(name);
  for (const std::string& name : known)
    if (std::find(order.begin(), order.end(), name) == order.end()) order.push_back(name);

  BackendChoice choice;
  for (const std::string& name : order) {
    // Constructing is the only honest test of "can start": a CUDA backend needs a device,
    // a driver and its libraries, and says which one is missing.
    try {
      registry.make_backend(name);
      choice.name = name;
      return choice;
    } catch (const Error& e) {
      choice.passed_over.push_back(name + ": " + e.what());
    }
  }
  std::string reasons;
  for (const std::string& reason : choice.passed_over)
    reasons += (reasons.empty() ? "" : "; ") + reason;
  fail(ErrorKind::unsupported, "backend auto: no backend can start (",
       reasons.empty() ? std::string("none registered") : reasons, ")");
}

}  // namespace tunescope
