// For the CLI tests that run tunescope on files of their own: a fresh folder per test
// (tests/core/ScratchDir.h) and the bytes of a file.
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/core/ScratchDir.h"

namespace tunescope::test_support {

inline std::string file_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

}  // namespace tunescope::test_support
