// Helpers shared by the data-layer tests: a temporary folder, raw file access and the
// shared assertion on a thrown Error (tests/core/ExpectError.h).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <string>
#include <vector>

#include "core/base/Error.h"
#include "tests/core/ExpectError.h"
#include "tests/core/ScratchDir.h"

namespace tunescope::data::test_support {

using tunescope::test_support::ScratchDir;

inline void write_bytes(const std::filesystem::path& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << path;
}

inline std::vector<uint8_t> read_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

using tunescope::test_support::expect_error;

}  // namespace tunescope::data::test_support
