// The one main of every test program: GoogleTest's, plus an exit code that CTest reads as
// "skipped" when every test of the run skipped (the GPU tests without a device). CTest
// runs one entry per suite (RegisterSuites.cmake); a skip pattern on the output could
// hide a failure beside a skip, an exit code cannot.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string_view>

namespace {

constexpr std::string_view kSkippedFlag = "--all-skipped-exit-code=";

int all_skipped_exit_code(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg.starts_with(kSkippedFlag)) return std::atoi(arg.substr(kSkippedFlag.size()).data());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  const int skipped_code = all_skipped_exit_code(argc, argv);
  const int rc = RUN_ALL_TESTS();
  const ::testing::UnitTest& unit = *::testing::UnitTest::GetInstance();
  if (rc == 0 && skipped_code != 0 && unit.successful_test_count() == 0 &&
      unit.skipped_test_count() > 0) {
    return skipped_code;
  }
  return rc;
}
