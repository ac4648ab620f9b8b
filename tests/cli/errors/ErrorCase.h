// Shared by the CLI error tests (one file per kind of bad input, issue 8): a snapshot of
// every file in a test's folder, and one check per bad-input case: the exact exit code, a
// message naming the culprit and the problem, and a folder that afterwards holds exactly
// the same files with the same bytes (nothing changed, no partial output file left).
#pragma once

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "tests/cli/RunCli.h"
#include "tests/cli/TestFolder.h"

namespace tunescope::test_support {

namespace fs = std::filesystem;

inline void write_file(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
  ASSERT_TRUE(out.good()) << path;
}

// Runs SQL on the SQLite file `path` (created if missing), as another program would.
inline void run_sql(const fs::path& path, const std::string& statements) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK) << path;
  char* message = nullptr;
  const int rc = sqlite3_exec(db, statements.c_str(), nullptr, nullptr, &message);
  EXPECT_EQ(rc, SQLITE_OK) << (message ? message : "");
  sqlite3_free(message);
  sqlite3_close(db);
}

// Every regular file under a folder with its bytes.
class FolderSnapshot {
 public:
  explicit FolderSnapshot(const fs::path& folder) : folder_(folder), files_(read(folder)) {}

  // Empty when the folder holds exactly the files of the snapshot, byte for byte;
  // otherwise each file added, removed or changed.
  std::string differences() const {
    const auto now = read(folder_);
    std::string out;
    for (const auto& [path, bytes] : files_) {
      const auto it = now.find(path);
      if (it == now.end())
        out += "removed: " + path + "\n";
      else if (it->second != bytes)
        out += "changed: " + path + "\n";
    }
    for (const auto& [path, bytes] : now)
      if (!files_.count(path)) out += "added: " + path + "\n";
    return out;
  }

 private:
  static std::map<std::string, std::string> read(const fs::path& folder) {
    std::map<std::string, std::string> files;
    for (const auto& entry : fs::recursive_directory_iterator(folder))
      if (entry.is_regular_file())
        files[fs::relative(entry.path(), folder).string()] = file_bytes(entry.path());
    return files;
  }
  fs::path folder_;
  std::map<std::string, std::string> files_;
};

// A fresh folder per test (CTest runs the tests of a file in parallel processes).
struct ErrorCase {
  std::string args;                   // the tunescope command line
  std::vector<std::string> expected;  // each must appear in the output: the culprit, the problem
  int exit_code = 2;                  // usage and input errors
};

// Runs the case and checks its exit code, its message and that `folder` is unchanged.
inline void expect_error(const fs::path& folder, const ErrorCase& c) {
  SCOPED_TRACE(c.args);
  const FolderSnapshot before(folder);
  const CliResult r = run_cli(c.args);
  EXPECT_EQ(r.exit_code, c.exit_code) << r.output;
  for (const std::string& part : c.expected)
    EXPECT_NE(r.output.find(part), std::string::npos) << "'" << part << "' missing from:\n"
                                                      << r.output;
  EXPECT_EQ(r.output.find("terminate called"), std::string::npos) << r.output;
  EXPECT_EQ(before.differences(), "") << r.output;
}

}  // namespace tunescope::test_support
