// Shared pieces of the trace file writers: gzip-or-plain text output, atomic
// replacement of the target file, nesting tracks and device names.
#include "profiler/TraceFileOutput.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace tunescope::profiler::trace_output {

namespace fs = std::filesystem;

namespace {
constexpr size_t kFlushBytes = 1 << 20;

// Unique among concurrent writers in this process and across processes.
fs::path temp_path_next_to(const fs::path& path) {
  static std::atomic<unsigned> counter{0};
  std::string name = ".";
  name.append(path.filename().string()).append(".tmp-").append(std::to_string(::getpid()));
  name.append("-").append(std::to_string(counter.fetch_add(1)));
  return path.parent_path() / name;
}
}  // namespace

TextOutput::TextOutput(const fs::path& path, bool gzip) {
  errno = 0;
  file_ = gzopen(path.c_str(), gzip ? "wb6" : "wbT");
  if (!file_) throw std::runtime_error(errno ? std::strerror(errno) : "cannot open for writing");
  gzbuffer(file_, 1 << 17);
  buffer_.reserve(kFlushBytes + 4096);
}

TextOutput::~TextOutput() {
  if (file_) gzclose(file_);
}

TextOutput& TextOutput::raw(std::string_view text) {
  buffer_.append(text);
  if (buffer_.size() >= kFlushBytes) flush();
  return *this;
}

TextOutput& TextOutput::string(std::string_view text) {
  const bool plain = std::all_of(text.begin(), text.end(), [](char c) {
    return c >= 0x20 && c < 0x7f && c != '"' && c != '\\';
  });
  if (plain) return raw("\"").raw(text).raw("\"");
  return raw(nlohmann::json(std::string(text))
                 .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

TextOutput& TextOutput::integer(int64_t value) {
  char text[24];
  const auto end = std::to_chars(text, text + sizeof text, value).ptr;
  return raw(std::string_view(text, static_cast<size_t>(end - text)));
}

TextOutput& TextOutput::microseconds(int64_t ns) {
  if (ns < 0) {
    raw("-");
    ns = -ns;
  }
  char fraction[4] = {static_cast<char>('0' + ns / 100 % 10), static_cast<char>('0' + ns / 10 % 10),
                      static_cast<char>('0' + ns % 10), 0};
  return integer(ns / 1000).raw(".").raw(fraction);
}

TextOutput& TextOutput::number(double value) {
  if (!std::isfinite(value)) return raw("0");
  char text[32];
  const auto end = std::to_chars(text, text + sizeof text, value).ptr;
  return raw(std::string_view(text, static_cast<size_t>(end - text)));
}

void TextOutput::close() {
  flush();
  const int status = gzclose(std::exchange(file_, nullptr));
  if (status != Z_OK)
    throw std::runtime_error(status == Z_ERRNO ? std::strerror(errno) : "zlib error on close");
}

void TextOutput::flush() {
  if (buffer_.empty()) return;
  if (gzwrite(file_, buffer_.data(), static_cast<unsigned>(buffer_.size())) == 0) {
    int code = Z_OK;
    const char* message = gzerror(file_, &code);
    throw std::runtime_error(code == Z_ERRNO ? std::strerror(errno) : message);
  }
  buffer_.clear();
}

void write_atomically(const fs::path& path, const std::function<void(const fs::path&)>& write_to) {
  const fs::path temp = temp_path_next_to(path);
  try {
    write_to(temp);
    fs::rename(temp, path);
  } catch (const std::exception& e) {
    std::error_code ignored;
    fs::remove(temp, ignored);
    // filesystem_error's what() already names both paths; give only its reason.
    const auto* fs_error = dynamic_cast<const fs::filesystem_error*>(&e);
    throw std::runtime_error(path.string() + ": cannot write trace: " +
                             (fs_error ? fs_error->code().message() : std::string(e.what())));
  }
}

std::vector<int> nesting_tracks(const std::vector<std::pair<int64_t, int64_t>>& sorted) {
  std::vector<std::vector<int64_t>> open_ends;  // per track: ends of enclosing records
  std::vector<int> tracks;
  tracks.reserve(sorted.size());
  for (const auto& [start, end] : sorted) {
    size_t track = 0;
    for (; track < open_ends.size(); ++track) {
      auto& ends = open_ends[track];
      while (!ends.empty() && ends.back() <= start) ends.pop_back();
      if (ends.empty() || end <= ends.back()) break;
    }
    if (track == open_ends.size()) open_ends.emplace_back();
    open_ends[track].push_back(end);
    tracks.push_back(static_cast<int>(track));
  }
  return tracks;
}

std::string device_name(const std::string& backend, int device) {
  if (device < 0) return "host";
  if (backend == "cpu") return device == 0 ? "CPU" : "CPU " + std::to_string(device);
  if (backend == "cuda") return "GPU " + std::to_string(device);
  return "device " + std::to_string(device);
}

int64_t time_origin(const Trace& trace) {
  int64_t origin = INT64_MAX;
  for (const Activity& a : trace.activities) origin = std::min(origin, a.start_ns);
  for (const Range& r : trace.ranges) origin = std::min(origin, r.start_ns);
  for (const Flow& f : trace.flows) origin = std::min({origin, f.from.ns, f.to.ns});
  return origin == INT64_MAX ? 0 : origin;
}

}  // namespace tunescope::profiler::trace_output
