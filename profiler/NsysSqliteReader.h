// Reads an Nsight Systems SQLite export into a Trace: a real `nsys export --type
// sqlite` database or one NsysSqliteWriter wrote (exactly, through its side tables).
#pragma once

#include <filesystem>

#include "profiler/Trace.h"

namespace tunescope::profiler {

class SqliteDatabase;

// True when `db` has the tables read_nsys_sqlite reads: StringIds and at least one of
// the CUPTI activity or NVTX tables (what tells an nsys export from other SQLite files).
bool is_nsys_export(const SqliteDatabase& db);

// Kernels, memcpy, memset and synchronisation records become activities (device =
// deviceId, stream = streamId; kernel name = shortName, else demangledName); CUDA
// runtime calls become overhead activities of the host (device -1, one lane per
// thread); NVTX push/pop and start/end ranges become phase ranges, one lane per thread.
// Times stay ns from session start unless the file carries our origin.
// Throws std::runtime_error naming the file: missing, not SQLite, or an SQLite
// database that is not an nsys export (no StringIds or no CUPTI/NVTX tables).
Trace read_nsys_sqlite(const std::filesystem::path& path);

}  // namespace tunescope::profiler
