// libFuzzer target: the tunescope.config/1 parser on arbitrary text. Every defect must
// be a tunescope::Error(input); an accepted config must survive a write/read round trip.
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <string>

#include "FuzzInput.h"
#include "core/base/Error.h"
#include "core/engine/RunConfig.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tunescope;
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const RunConfig config = run_config_from_json_text(text, "<fuzz>");
    // Whatever was accepted is written back to a config that reads as the same one.
    if (run_config_from_json_text(to_json_text(config), "<round trip>") != config) {
      std::fprintf(stderr, "fuzz_run_config: round trip changed the config\n");
      std::abort();
    }
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::input) fuzz::undocumented("fuzz_run_config", e.what());
  } catch (const std::exception& e) {
    fuzz::undocumented("fuzz_run_config", e.what());
  }
  return 0;
}
