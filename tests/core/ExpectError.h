// The assertion every error-path test makes: the call throws tunescope::Error of the
// expected kind (so the CLI maps it to the right exit code), and the message names
// everything a user needs to find the fault (file, key, op, shape).
#pragma once

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>

#include "core/base/Error.h"

namespace tunescope::test_support {

// Runs `call`, expecting an Error of `kind` whose message contains every one of `parts`.
template <typename Call>
void expect_error(ErrorKind kind, Call&& call, std::initializer_list<std::string> parts) {
  try {
    call();
    ADD_FAILURE() << "no error thrown; expected one mentioning '" << *parts.begin() << "'";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_EQ(static_cast<int>(e.kind()), static_cast<int>(kind)) << message;
    for (const std::string& part : parts)
      EXPECT_NE(message.find(part), std::string::npos)
          << "'" << part << "' missing from: " << message;
  }
}

}  // namespace tunescope::test_support
