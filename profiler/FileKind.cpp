// Content sniffing: SQLite's header, gzip's magic bytes, the first character of JSON.
#include "profiler/FileKind.h"

#include <zlib.h>

#include <cstdint>
#include <fstream>
#include <memory>
#include <string_view>

#include "profiler/NsysSqliteReader.h"
#include "profiler/SqliteDatabase.h"

namespace tunescope::profiler {

namespace fs = std::filesystem;

namespace {

constexpr size_t kSniffBytes = 4096;
constexpr std::string_view kSqliteHeader{"SQLite format 3\0", 16};
constexpr std::string_view kUtf8Bom{"\xEF\xBB\xBF"};

// JSON text whose first value is an object or an array: what every Chrome trace is.
bool starts_like_json_trace(std::string_view text) {
  if (text.substr(0, kUtf8Bom.size()) == kUtf8Bom) text.remove_prefix(kUtf8Bom.size());
  const size_t first = text.find_first_not_of(" \t\r\n");
  return first != std::string_view::npos && (text[first] == '{' || text[first] == '[');
}

// The first bytes of a gzip file's content (empty when it does not inflate).
std::string inflated_start(const fs::path& path) {
  std::unique_ptr<gzFile_s, int (*)(gzFile)> file(gzopen(path.c_str(), "rb"), &gzclose);
  if (!file) return {};
  std::string text(kSniffBytes, '\0');
  const int n = gzread(file.get(), text.data(), static_cast<unsigned>(text.size()));
  text.resize(n > 0 ? static_cast<size_t>(n) : 0);
  return text;
}

// The application_id field of SQLite's file header (4 bytes, big-endian, at offset 68):
// read from the bytes, so that a results DB too damaged for SQLite still tells what it is.
int64_t header_application_id(std::string_view head) {
  if (head.size() < 72) return 0;
  uint32_t id = 0;
  for (size_t i = 68; i < 72; ++i) id = id << 8 | static_cast<unsigned char>(head[i]);
  return static_cast<int32_t>(id);
}

FileKind sqlite_kind(const fs::path& path, std::string_view head) {
  if (header_application_id(head) == kResultsDbApplicationId) return FileKind::results_db;
  try {
    // Through SQLite too: a writer's WAL may hold a newer header than the file.
    const SqliteDatabase db(path, SqliteDatabase::Mode::read_only);
    if (db.application_id() == kResultsDbApplicationId) return FileKind::results_db;
    if (is_nsys_export(db)) return FileKind::nsys_sqlite;
  } catch (const SqliteError&) {
    // Not readable as SQLite after all: the reader it goes to says why.
  }
  return FileKind::other_sqlite;
}

}  // namespace

FileKind sniff_file(const fs::path& path) {
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (!fs::exists(status)) return FileKind::missing;
  if (fs::is_directory(status)) return FileKind::directory;
  if (!fs::is_regular_file(status))
    return FileKind::unknown;  // a FIFO or a device could block a read
  std::ifstream in(path, std::ios::binary);
  if (!in) return FileKind::unknown;
  std::string head(kSniffBytes, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  if (head.empty()) return FileKind::empty;
  if (head.substr(0, kSqliteHeader.size()) == kSqliteHeader) return sqlite_kind(path, head);
  if (head.size() >= 2 && head[0] == '\x1f' && head[1] == '\x8b')
    return starts_like_json_trace(inflated_start(path)) ? FileKind::trace_json_gz
                                                        : FileKind::unknown;
  return starts_like_json_trace(head) ? FileKind::trace_json : FileKind::unknown;
}

std::string describe(FileKind kind) {
  switch (kind) {
    case FileKind::missing: return "a missing file";
    case FileKind::directory: return "a directory";
    case FileKind::empty: return "an empty file";
    case FileKind::trace_json: return "a Chrome trace (JSON)";
    case FileKind::trace_json_gz: return "a Chrome trace (gzip-compressed JSON)";
    case FileKind::nsys_sqlite: return "an Nsight Systems SQLite export";
    case FileKind::results_db: return "a tunescope results DB";
    case FileKind::other_sqlite:
      return "an SQLite database that is neither a trace nor a results DB";
    case FileKind::unknown: break;
  }
  return "not a file tunescope reads";
}

}  // namespace tunescope::profiler
