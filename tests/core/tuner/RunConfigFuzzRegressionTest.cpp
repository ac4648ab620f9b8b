// Inputs found by fuzz/fuzz_run_config that once escaped the config parser as something
// other than Error(input): each must now be a clean input error naming the source.
#include <gtest/gtest.h>

#include <string>

#include "core/base/Error.h"
#include "core/engine/RunConfig.h"

namespace tunescope {
namespace {

void expect_input_error(const std::string& text, const std::string& what) {
  try {
    run_config_from_json_text(text, "fuzzed.json");
    FAIL() << "accepted: " << text;
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::input) << e.what();
    EXPECT_NE(std::string(e.what()).find("fuzzed.json"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
  }
}

// nlohmann::json reports a number beyond double's range as out_of_range.406, not as a
// parse_error: it escaped as a foreign exception (exit 1 from the CLI instead of 2).
TEST(RunConfigFuzzRegression, NumberOverflowIsAnInputError) {
  expect_input_error(R"({"schema":99999E555pe.config/1nchw", {)", "number overflow");
  expect_input_error(R"({"schema": "tunescope.config/1", "batch": 1e999})", "number overflow");
}

}  // namespace
}  // namespace tunescope
