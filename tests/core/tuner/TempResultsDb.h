// A results DB path in the temp folder, removed with SQLite's WAL files before and
// after a test; declared before the ResultsDb that uses it, so it outlives the DB.
#pragma once

#include <filesystem>
#include <string>

namespace tunescope::tuner::testing {

struct TempResultsDb {
  std::filesystem::path path;
  explicit TempResultsDb(const std::string& name)
      : path(std::filesystem::temp_directory_path() / ("tunescope-" + name)) {
    remove();
  }
  ~TempResultsDb() { remove(); }
  TempResultsDb(const TempResultsDb&) = delete;
  TempResultsDb& operator=(const TempResultsDb&) = delete;
  void remove() const {
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path.string() + suffix);
  }
};

}  // namespace tunescope::tuner::testing
