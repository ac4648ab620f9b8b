// IDX round trips (raw, gzip, multi-member gzip) and every rejected kind of damage.
#include "core/engine/data/IdxFile.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include "tests/core/engine/data/DataTestSupport.h"

namespace tunescope::data {
namespace {

using test_support::expect_error;
using test_support::read_bytes;
using test_support::ScratchDir;
using test_support::write_bytes;

IdxArray sample_array(std::vector<int64_t> dims) {
  IdxArray array;
  array.dims = std::move(dims);
  array.data.resize(static_cast<size_t>(array.element_count()));
  uint32_t state = 12345;
  for (uint8_t& b : array.data)
    b = static_cast<uint8_t>((state = state * 1103515245u + 12345u) >> 24);
  return array;
}

// An IDX header followed by `payload` bytes, built by hand so it may lie.
std::vector<uint8_t> idx_bytes(uint8_t type, std::vector<uint32_t> dims, size_t payload) {
  std::vector<uint8_t> bytes = {0, 0, type, static_cast<uint8_t>(dims.size())};
  for (uint32_t d : dims)
    for (int shift : {24, 16, 8, 0}) bytes.push_back(static_cast<uint8_t>(d >> shift));
  bytes.resize(bytes.size() + payload, 7);
  return bytes;
}

std::vector<uint8_t> gzip(const std::vector<uint8_t>& raw) {
  z_stream z{};
  EXPECT_EQ(
      deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY),
      Z_OK);
  std::vector<uint8_t> out(deflateBound(&z, raw.size()));
  z.next_in = const_cast<Bytef*>(raw.data());
  z.avail_in = static_cast<uInt>(raw.size());
  z.next_out = out.data();
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

void expect_input_error(const std::filesystem::path& path, std::initializer_list<std::string> parts,
                        const IdxReadOptions& options = {}) {
  expect_error(
      ErrorKind::input, [&] { read_idx(path, options); }, parts);
  expect_error(ErrorKind::input, [&] { read_idx(path, options); }, {path.string()});
}

TEST(IdxFile, RoundTripRaw) {
  ScratchDir dir;
  const IdxArray array = sample_array({4, 5, 6});
  write_idx(dir / "a-idx3-ubyte", array);
  const std::vector<uint8_t> bytes = read_bytes(dir / "a-idx3-ubyte");
  ASSERT_EQ(bytes.size(), 16 + 120u);
  EXPECT_EQ(bytes[2], 0x08);
  EXPECT_EQ(bytes[3], 3);
  EXPECT_EQ(bytes[7], 4);  // big-endian first dimension
  const IdxArray back = read_idx(dir / "a-idx3-ubyte");
  EXPECT_EQ(back.dims, array.dims);
  EXPECT_EQ(back.data, array.data);
}

TEST(IdxFile, RoundTripGzipDetectedByContent) {
  ScratchDir dir;
  const IdxArray array = sample_array({3000, 28, 28});  // larger than the inflate buffer
  write_idx(dir / "images.gz", array);
  write_idx(dir / "images-no-suffix", array, IdxCompression::gzip);
  for (const char* name : {"images.gz", "images-no-suffix"}) {
    const std::vector<uint8_t> bytes = read_bytes(dir / name);
    ASSERT_GE(bytes.size(), 2u);
    EXPECT_EQ(bytes[0], 0x1f) << name;
    EXPECT_EQ(bytes[1], 0x8b) << name;
    const IdxArray back = read_idx(dir / name);
    EXPECT_EQ(back.dims, array.dims);
    EXPECT_EQ(back.data, array.data);
  }
}

TEST(IdxFile, ReadsConcatenatedGzipMembers) {
  // The trailer size of the last member is tiny here, so the reader's first allocation
  // is too small and it must grow to the claimed size.
  ScratchDir dir;
  std::vector<uint8_t> raw = idx_bytes(0x08, {3, 1000, 1000}, 0);
  const IdxArray array = sample_array({3, 1000, 1000});
  raw.insert(raw.end(), array.data.begin(), array.data.end());
  const size_t split = raw.size() - 100;
  std::vector<uint8_t> file = gzip({raw.begin(), raw.begin() + split});
  const std::vector<uint8_t> tail = gzip({raw.begin() + split, raw.end()});
  file.insert(file.end(), tail.begin(), tail.end());
  write_bytes(dir / "multi.gz", file);
  const IdxArray back = read_idx(dir / "multi.gz");
  EXPECT_EQ(back.dims, array.dims);
  EXPECT_EQ(back.data, array.data);
}

TEST(IdxFile, EmptyDimensionIsAnEmptyArray) {
  ScratchDir dir;
  write_idx(dir / "empty", IdxArray{{0, 28, 28}, {}});
  const IdxArray back = read_idx(dir / "empty");
  EXPECT_EQ(back.dims, (std::vector<int64_t>{0, 28, 28}));
  EXPECT_TRUE(back.data.empty());
}

TEST(IdxFile, RejectsMissingFileAndFolder) {
  ScratchDir dir;
  expect_input_error(dir / "nope-idx1-ubyte", {"does not exist"});
  expect_input_error(dir.path(), {"is not a regular file"});
}

TEST(IdxFile, RejectsWrongMagic) {
  ScratchDir dir;
  std::vector<uint8_t> bytes = idx_bytes(0x08, {4}, 4);
  bytes[0] = 0x12;
  bytes[1] = 0x34;
  write_bytes(dir / "magic", bytes);
  expect_input_error(dir / "magic", {"not an IDX file", "0x12340801"});
}

TEST(IdxFile, RejectsUnsupportedTypeCode) {
  ScratchDir dir;
  write_bytes(dir / "floats", idx_bytes(0x0D, {4}, 16));
  expect_input_error(dir / "floats", {"unsupported element type code 0x0D", "float32"});
}

TEST(IdxFile, RejectsZeroOrExcessiveDimensionCount) {
  ScratchDir dir;
  write_bytes(dir / "zero", idx_bytes(0x08, {}, 4));
  expect_input_error(dir / "zero", {"dimension count 0"});
  write_bytes(dir / "many", idx_bytes(0x08, std::vector<uint32_t>(kIdxMaxDims + 1, 1), 1));
  expect_input_error(dir / "many", {"dimension count 9"});
}

TEST(IdxFile, RejectsDimensionsOverflowingInt64) {
  ScratchDir dir;
  write_bytes(dir / "overflow", idx_bytes(0x08, {0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF}, 8));
  expect_input_error(dir / "overflow", {"4294967295x4294967295x4294967295", "overflow"});
}

TEST(IdxFile, RejectsDimensionsAboveTheSizeLimit) {
  ScratchDir dir;
  write_bytes(dir / "huge", idx_bytes(0x08, {100000, 100000}, 8));
  expect_input_error(dir / "huge", {"10000000000 bytes", "limit"});
  write_bytes(dir / "small", idx_bytes(0x08, {10, 11}, 110));
  IdxReadOptions strict;
  strict.max_bytes = 100;
  expect_input_error(dir / "small", {"110 bytes", "limit of 100"}, strict);
  EXPECT_EQ(read_idx(dir / "small").data.size(), 110u);
}

TEST(IdxFile, RejectsHeaderClaimingMoreThanTheFileHolds) {
  ScratchDir dir;
  write_bytes(dir / "short", idx_bytes(0x08, {10, 28, 28}, 5 * 784));
  expect_input_error(dir / "short", {"10x28x28 = 7840 bytes", "holds only 3920", "truncated"});
  write_bytes(dir / "short.gz", gzip(idx_bytes(0x08, {10, 28, 28}, 5 * 784)));
  expect_input_error(dir / "short.gz", {"holds only 3920"});
  // Gigabytes claimed by a tiny file: must fail on the data, not try to allocate it.
  write_bytes(dir / "liar", idx_bytes(0x08, {1, 60000, 60000}, 10));
  expect_input_error(dir / "liar", {"3600000000 bytes", "holds only 10"});
}

TEST(IdxFile, RejectsTruncatedFiles) {
  ScratchDir dir;
  write_idx(dir / "full", sample_array({20, 8, 8}));
  std::vector<uint8_t> bytes = read_bytes(dir / "full");
  write_bytes(dir / "cut-header", {bytes.begin(), bytes.begin() + 10});
  expect_input_error(dir / "cut-header", {"ends inside the header after 10 bytes"});
  write_bytes(dir / "cut-data", {bytes.begin(), bytes.end() - 1});
  expect_input_error(dir / "cut-data", {"holds only 1279", "truncated"});
  write_bytes(dir / "empty-file", {});
  expect_input_error(dir / "empty-file", {"ends inside the header after 0 bytes"});

  write_idx(dir / "full.gz", sample_array({20, 8, 8}));
  bytes = read_bytes(dir / "full.gz");
  write_bytes(dir / "cut.gz", {bytes.begin(), bytes.end() - 6});
  expect_input_error(dir / "cut.gz", {"gzip stream is truncated"});
}

TEST(IdxFile, RejectsCorruptGzip) {
  ScratchDir dir;
  write_idx(dir / "good.gz", sample_array({20, 8, 8}));
  const std::vector<uint8_t> good = read_bytes(dir / "good.gz");
  std::vector<uint8_t> bad_method = good;
  bad_method[2] = 7;  // deflate is method 8
  write_bytes(dir / "method.gz", bad_method);
  expect_input_error(dir / "method.gz", {"corrupt gzip stream", "unknown compression method"});
  std::vector<uint8_t> bad_crc = good;
  bad_crc[bad_crc.size() - 8] ^= 0xFF;  // first byte of the CRC-32 trailer
  write_bytes(dir / "crc.gz", bad_crc);
  expect_input_error(dir / "crc.gz", {"corrupt gzip stream", "incorrect data check"});
}

TEST(IdxFile, RejectsTrailingGarbage) {
  ScratchDir dir;
  std::vector<uint8_t> bytes = idx_bytes(0x08, {4}, 4);
  bytes.insert(bytes.end(), {1, 2, 3});
  write_bytes(dir / "tail", bytes);
  expect_input_error(dir / "tail", {"3 unexpected bytes after the 4 bytes of data"});
  std::vector<uint8_t> zipped = gzip(idx_bytes(0x08, {4}, 4));
  zipped.insert(zipped.end(), {'j', 'u', 'n', 'k'});
  write_bytes(dir / "tail.gz", zipped);
  expect_input_error(dir / "tail.gz", {"unexpected bytes after the end of the gzip stream"});
  write_bytes(dir / "tail-inside.gz", gzip(bytes));
  expect_input_error(dir / "tail-inside.gz", {"3 unexpected bytes"});
}

TEST(IdxFile, WriterRejectsInconsistentArrays) {
  ScratchDir dir;
  expect_error(ErrorKind::usage,
               [&] {
                 write_idx(dir / "x", IdxArray{{2, 3}, std::vector<uint8_t>(5)});
               },
               {"describe 6 bytes", "holds 5"});
  expect_error(ErrorKind::usage,
               [&] {
                 write_idx(dir / "x", IdxArray{{}, {}});
               },
               {"dimension count 0"});
  expect_error(ErrorKind::usage,
               [&] {
                 write_idx(dir / "x", IdxArray{{int64_t{1} << 33}, {}});
               },
               {"32-bit"});
  expect_error(ErrorKind::runtime,
               [&] { write_idx(dir / "no-such-folder" / "x", sample_array({2})); },
               {"cannot write IDX file"});
}

}  // namespace
}  // namespace tunescope::data
