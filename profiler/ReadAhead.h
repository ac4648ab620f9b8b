// Reads a stream on a thread of its own, a few chunks ahead of the consumer, so that
// producing the bytes (inflating a .json.gz) overlaps consuming them (parsing the JSON).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace tunescope::profiler {

class ReadAhead {
 public:
  struct Chunk {
    std::vector<char> bytes;  // the fill resizes it to what it read
    uint64_t position = 0;    // where the source stands after this chunk (progress)
  };
  // `fill` runs on the reader's thread with a chunk of `chunk_bytes`; it returns false
  // at the end of the stream (its last chunk may still hold bytes). An exception it
  // throws reaches the consumer's read(), after the chunks before it (the failing
  // chunk's bytes are dropped).
  ReadAhead(std::function<bool(Chunk&)> fill, size_t chunk_bytes, size_t depth);
  ~ReadAhead();  // stops the thread, even in the middle of the stream
  ReadAhead(const ReadAhead&) = delete;
  ReadAhead& operator=(const ReadAhead&) = delete;

  // Copies up to `capacity` bytes into `out`; 0 once the stream has ended.
  size_t read(char* out, size_t capacity);
  // The position of the chunk being consumed.
  uint64_t position() const { return position_; }

 private:
  void run();

  std::function<bool(Chunk&)> fill_;
  const size_t chunk_bytes_, depth_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Chunk> ready_;
  bool ended_ = false, stop_ = false;
  std::exception_ptr failure_;
  Chunk current_;
  size_t consumed_ = 0;
  uint64_t position_ = 0;
  std::thread thread_;
};

}  // namespace tunescope::profiler
