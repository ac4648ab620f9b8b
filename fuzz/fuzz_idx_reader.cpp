// libFuzzer target: read_idx on arbitrary bytes (raw or gzip IDX). Every defect must be
// a tunescope::Error(input); anything else escaping, a crash, a sanitizer report or an
// allocation beyond the cap is a finding.
#include <cstdint>
#include <cstdlib>
#include <exception>

#include "FuzzInput.h"
#include "core/base/Error.h"
#include "core/engine/data/IdxFile.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tunescope;
  const auto path = fuzz::input_file(data, size, ".idx");
  data::IdxReadOptions options;
  options.max_bytes = int64_t{64} << 20;  // a header may not make the reader allocate more
  try {
    const data::IdxArray array = data::read_idx(path, options);
    // What was accepted is self-consistent.
    if (static_cast<int64_t>(array.data.size()) != array.element_count()) std::abort();
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::input) fuzz::undocumented("fuzz_idx_reader", e.what());
  } catch (const std::exception& e) {
    fuzz::undocumented("fuzz_idx_reader", e.what());
  }
  return 0;
}
