// Shared by the libFuzzer targets: the input bytes as a file (the readers under test
// take paths, as users give them) and the rule that only a documented error may escape.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace tunescope::fuzz {

// One file per process, rewritten for every input; /dev/shm keeps it off the disk.
inline std::filesystem::path input_file(const uint8_t* data, size_t size, const char* extension) {
  static const std::filesystem::path path = [&] {
    const std::filesystem::path dir =
        std::filesystem::exists("/dev/shm") ? "/dev/shm" : std::filesystem::temp_directory_path();
    return dir / ("tunescope-fuzz-" + std::to_string(getpid()) + extension);
  }();
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  out.close();
  if (!out) std::abort();  // the harness itself failed: not a finding about the reader
  return path;
}

// An exception the reader does not document is a finding: report it and crash so that
// libFuzzer saves the input.
[[noreturn]] inline void undocumented(const char* target, const char* what) {
  std::fprintf(stderr, "%s: undocumented exception escaped: %s\n", target, what);
  std::abort();
}

}  // namespace tunescope::fuzz
