// The streaming JSON scanner against nlohmann::json as the reference parser, with
// chunks so small that every token straddles a chunk boundary.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>

#include "profiler/JsonScanner.h"

namespace tunescope::profiler {
namespace {

JsonScanner scanner_over(const std::string& text, size_t chunk, size_t& at) {
  return JsonScanner(
      [&text, &at](char* buffer, size_t capacity) {
        const size_t n = std::min(capacity, text.size() - at);
        std::memcpy(buffer, text.data() + at, n);
        at += n;
        return n;
      },
      chunk);
}

TEST(JsonScannerTest, ScalarsMatchNlohmannAtEveryChunkSize) {
  const std::string text =
      R"([ "plain", "esc \" \\ \/ \b \f \n \r \t", "\u0041\u00e9\u20ac\ud834\udd1e",
    "caf)"
      "\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"
      R"(", 0, -7, 123456789012345678, 9223372036854775807,
    -9223372036854775808, 9223372036854775808, 1.5, -0.001, 12.345, 1e3, 2.5E-3, 1234567890.123456789,
    null, true, false, {"a": [1, {"b": "}"}]}, [] ])";
  const nlohmann::json reference = nlohmann::json::parse(text);
  for (size_t chunk = 1; chunk <= 9; ++chunk) {
    SCOPED_TRACE("chunk " + std::to_string(chunk));
    size_t at = 0;
    JsonScanner in = scanner_over(text, chunk, at);
    in.expect('[', "'['");
    for (const nlohmann::json& expected : reference) {
      JsonScalar value;
      in.read_scalar(value);
      if (expected.is_string()) {
        ASSERT_EQ(value.type, JsonScalar::Type::string);
        EXPECT_EQ(value.text, expected.get<std::string>());
      } else if (expected.is_number_integer() && !expected.is_number_unsigned()) {
        ASSERT_EQ(value.type, JsonScalar::Type::integer) << expected;
        EXPECT_EQ(value.integer, expected.get<int64_t>());
      } else if (expected.is_number()) {
        ASSERT_TRUE(value.is_number()) << expected;
        EXPECT_EQ(value.as_double(), expected.get<double>()) << expected;
      } else if (expected.is_null()) {
        EXPECT_EQ(value.type, JsonScalar::Type::null);
      } else {
        EXPECT_EQ(value.type, JsonScalar::Type::other) << expected;
      }
      if (!in.consume_if(',')) break;
    }
    in.expect(']', "']'");
    in.expect_end();
  }
}

TEST(JsonScannerTest, CapturedValuesParseToTheSameJson) {
  const std::string text = R"({"k": {"x": [1, 2.5, "s\"", {"y": null}], "z": true}, "n": 3})";
  for (size_t chunk = 1; chunk <= 5; ++chunk) {
    size_t at = 0;
    JsonScanner in = scanner_over(text, chunk, at);
    in.expect('{', "'{'");
    std::string key, raw;
    in.read_string(key);
    in.expect(':', "':'");
    in.capture_value(raw, 1000, "'k'");
    EXPECT_EQ(nlohmann::json::parse(raw), nlohmann::json::parse(text)["k"]) << raw;
    EXPECT_TRUE(in.consume_if(','));
  }
}

TEST(JsonScannerTest, RefusesACaptureOverItsLimit) {
  const std::string text = R"({"big": ")" + std::string(5000, 'a') + R"("})";
  size_t at = 0;
  JsonScanner in = scanner_over(text, 64, at);
  in.expect('{', "'{'");
  std::string key, raw;
  in.read_string(key);
  in.expect(':', "':'");
  try {
    in.capture_value(raw, 1000, "'big'");
    FAIL() << "captured past the limit";
  } catch (const JsonSyntaxError& e) {
    EXPECT_EQ(std::string(e.what()), "not JSON: 'big' is larger than 1000 bytes at byte 8");
  }
  EXPECT_LT(raw.size(), 1100u);
}

TEST(JsonScannerTest, RejectsWhatNlohmannRejects) {
  for (const std::string bad :
       {"[1,]", "{\"a\" 1}", "[1 2]", "{\"a\":1,}", "[-]", "[1.]", "[1e]", "[tru]", "[\"\\ud800\"]",
        "[\"\\udc00\"]", "[\"\x01\"]", "{1: 2}", "[\"\xc0\xaf\"]", "[\"\xed\xa0\x80\"]"}) {
    EXPECT_THROW(
        {
          const auto parsed = nlohmann::json::parse(bad);
          (void)parsed;
        },
        nlohmann::json::parse_error)
        << bad;
    size_t at = 0;
    JsonScanner in = scanner_over(bad, 3, at);
    EXPECT_THROW(
        {
          in.skip_value();
          in.expect_end();
        },
        JsonSyntaxError)
        << bad;
  }
}

TEST(JsonScannerTest, SkipsDeepNestingWithoutRecursion) {
  const std::string deep = std::string(5000, '[') + std::string(5000, ']');
  size_t at = 0;
  JsonScanner in = scanner_over(deep, 1 << 10, at);
  in.skip_value();
  in.expect_end();
  const std::string deeper = std::string(20000, '[') + std::string(20000, ']');
  at = 0;
  JsonScanner too_deep = scanner_over(deeper, 1 << 10, at);
  EXPECT_THROW(too_deep.skip_value(), JsonSyntaxError);
}

}  // namespace
}  // namespace tunescope::profiler
