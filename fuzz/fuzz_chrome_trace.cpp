// libFuzzer target: read_trace_file (Chrome/Kineto/PyTorch JSON, plain or gzip; nsys
// SQLite by its header) on arbitrary bytes. It documents std::runtime_error naming the
// file; anything else escaping, a crash or a sanitizer report is a finding.
#include <cstdint>
#include <exception>
#include <stdexcept>
#include <string>

#include "FuzzInput.h"
#include "profiler/TraceFiles.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tunescope;
  const auto path = fuzz::input_file(data, size, ".json");
  try {
    const profiler::Trace trace = profiler::read_trace_file(path);
    (void)trace;
  } catch (const std::runtime_error& e) {
    if (std::string(e.what()).find(path.string()) == std::string::npos)
      fuzz::undocumented("fuzz_chrome_trace (message does not name the file)", e.what());
  } catch (const std::exception& e) {
    fuzz::undocumented("fuzz_chrome_trace", e.what());
  }
  return 0;
}
