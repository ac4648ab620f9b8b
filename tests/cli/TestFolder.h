// A fresh folder per CLI test (named after the test, removed afterwards) and the bytes
// of a file: shared by the CLI tests that run tunescope on files of their own.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <system_error>

namespace tunescope::testing {

inline std::string file_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

class TestFolder {
 public:
  TestFolder()
      : dir_(std::filesystem::temp_directory_path() /
             (std::string("tunescope-test-") + ::testing::UnitTest::GetInstance()->current_test_suite()->name() +
              "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name())) {
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  ~TestFolder() {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  TestFolder(const TestFolder&) = delete;
  TestFolder& operator=(const TestFolder&) = delete;

  const std::filesystem::path& path() const { return dir_; }
  std::string at(const std::string& name) const { return (dir_ / name).string(); }

 private:
  std::filesystem::path dir_;
};

}  // namespace tunescope::testing
