// What a file is, told from its content rather than its name: the one place that
// answers it for every front end (`tunescope report`, `export`, the GUI's Open, drag and
// drop and command line) and for read_trace_file.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

namespace tunescope::profiler {

// PRAGMA application_id of a tunescope results DB ("TSCP"). core/tuner/ResultsDb writes
// it; it is here, below core/tuner, because the profiler's readers must tell a results
// DB from a trace too. The mark only: the schema stays with ResultsDb.
inline constexpr int64_t kResultsDbApplicationId = 0x54534350;

enum class FileKind {
  missing,  // no such file
  directory,
  empty,          // zero bytes
  trace_json,     // Chrome trace JSON: ours, Kineto's (PyTorch profiler) or PyTorch's legacy list
  trace_json_gz,  // the same, gzip-compressed
  nsys_sqlite,    // SQLite with Nsight Systems' tables (`nsys export --type sqlite`, or ours)
  results_db,     // SQLite marked with kResultsDbApplicationId (even one SQLite cannot read)
  other_sqlite,   // SQLite of another application, or one SQLite cannot read (corrupt, truncated)
  unknown,        // anything else: unreadable or not a regular file, gzip of something else
};

// Reads at most the first 4 KiB (inflated, for gzip) and, for SQLite not marked as a
// results DB in its header, the application_id and schema through a read-only
// connection that leaves no -wal/-shm files behind.
// Never throws for a bad file: that is what `unknown` and `other_sqlite` are for.
FileKind sniff_file(const std::filesystem::path& path);

// "a Chrome trace (JSON)", "a tunescope results DB", ... for messages.
std::string describe(FileKind kind);

}  // namespace tunescope::profiler
