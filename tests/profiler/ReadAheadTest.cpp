// ReadAhead: the consumer sees the producer's bytes in order whatever the sizes on each
// side, an exception of the producer after the bytes before it, and a reader destroyed
// in the middle of a stream stops its thread.
#include "profiler/ReadAhead.h"

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <vector>

namespace tunescope::profiler {
namespace {

// A stream of `total` bytes, byte i holding i % 251, delivered in chunks of the reader's size.
std::function<bool(ReadAhead::Chunk&)> counting_stream(size_t total, size_t& produced) {
  return [total, &produced](ReadAhead::Chunk& chunk) {
    const size_t n = std::min(chunk.bytes.size(), total - produced);
    chunk.bytes.resize(n);
    for (size_t i = 0; i < n; ++i) chunk.bytes[i] = static_cast<char>((produced + i) % 251);
    produced += n;
    chunk.position = produced;
    return produced < total;
  };
}

TEST(ReadAhead, DeliversEveryByteInOrderWhateverTheSizesOnEachSide) {
  for (const size_t chunk : {1u, 7u, 4096u}) {
    for (const size_t capacity : {1u, 5u, 10000u}) {
      SCOPED_TRACE(std::to_string(chunk) + "-byte chunks, reads of " + std::to_string(capacity));
      const size_t total = 20011;
      size_t produced = 0;
      ReadAhead ahead(counting_stream(total, produced), chunk, 3);
      std::vector<char> got, buffer(capacity);
      uint64_t last_position = 0;
      while (const size_t n = ahead.read(buffer.data(), buffer.size())) {
        got.insert(got.end(), buffer.begin(), buffer.begin() + static_cast<ptrdiff_t>(n));
        EXPECT_GE(ahead.position(), got.size());  // the chunk being consumed is read
        EXPECT_GE(ahead.position(), last_position);
        last_position = ahead.position();
      }
      ASSERT_EQ(got.size(), total);
      for (size_t i = 0; i < total; ++i)
        ASSERT_EQ(got[i], static_cast<char>(i % 251)) << "byte " << i;
      EXPECT_EQ(ahead.position(), total);
      EXPECT_EQ(ahead.read(buffer.data(), buffer.size()), 0u);  // stays at the end
    }
  }
}

TEST(ReadAhead, AProducersErrorArrivesAfterTheBytesBeforeIt) {
  int calls = 0;
  ReadAhead ahead(
      [&calls](ReadAhead::Chunk& chunk) {
        if (++calls == 3) throw std::runtime_error("corrupt gzip data");
        chunk.bytes.assign(chunk.bytes.size(), 'x');
        return true;
      },
      16, 2);
  char buffer[16];
  EXPECT_EQ(ahead.read(buffer, sizeof buffer), 16u);
  EXPECT_EQ(ahead.read(buffer, sizeof buffer), 16u);
  EXPECT_THROW(ahead.read(buffer, sizeof buffer), std::runtime_error);
}

TEST(ReadAhead, DestroyedMidStreamStopsItsThread) {
  std::atomic<size_t> fills{0};
  {
    ReadAhead ahead(
        [&fills](ReadAhead::Chunk& chunk) {
          ++fills;
          chunk.bytes.assign(chunk.bytes.size(), 'y');
          return true;  // an endless stream
        },
        64, 2);
    char buffer[10];
    EXPECT_EQ(ahead.read(buffer, sizeof buffer), 10u);
  }
  // Bounded by the depth: the thread never ran ahead of two chunks plus the consumed one.
  EXPECT_LE(fills.load(), 4u);
}

}  // namespace
}  // namespace tunescope::profiler
