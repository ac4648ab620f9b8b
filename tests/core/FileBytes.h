// A whole file's bytes, read or written in one call, for the tests that compare or
// corrupt files.
#pragma once

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace tunescope::test_support {

inline std::string read_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline void write_bytes(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

}  // namespace tunescope::test_support
