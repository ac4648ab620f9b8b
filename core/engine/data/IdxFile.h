// Reading and writing MNIST-format IDX files (unsigned-byte arrays), raw or gzip.
//
// An IDX file is a 4-byte big-endian magic 0x0000TTNN (TT: element type, NN: number of
// dimensions), NN big-endian uint32 dimension sizes, then the elements in row-major
// order. Only type 0x08 (unsigned byte) is supported: it is what image and label sets
// use. Every defect of a file is an Error(input) whose message names the file.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace tunescope::data {

inline constexpr uint8_t kIdxTypeUint8 = 0x08;
// The format allows 255 dimensions; data sets use 1 (labels) to 4 (colour images),
// so a larger count means a damaged or foreign file.
inline constexpr int kIdxMaxDims = 8;

// A row-major array of bytes with its dimension sizes.
struct IdxArray {
  std::vector<int64_t> dims;
  std::vector<uint8_t> data;

  // Product of dims: the number of elements the header describes.
  int64_t element_count() const;
};

// Dimensions as they appear in messages: "60000x28x28".
std::string idx_dims_text(const std::vector<int64_t>& dims);

struct IdxReadOptions {
  // Largest data size accepted. A header is checked against it before anything is
  // allocated, so a damaged header cannot make the reader reserve absurd memory.
  int64_t max_bytes = int64_t{1} << 32;
};

// Reads a raw or gzip-compressed IDX file (detected by content, not by name).
// Rejects: a missing file, a wrong magic, an unsupported type code, a dimension count
// outside 1..kIdxMaxDims, dimensions whose product overflows int64 or exceeds
// options.max_bytes, a file holding fewer bytes than its header claims, bytes after the
// data, and a corrupt or truncated gzip stream.
IdxArray read_idx(const std::filesystem::path& path, const IdxReadOptions& options = {});

enum class IdxCompression {
  by_extension,  // gzip when the file name ends in ".gz", raw otherwise
  none,
  gzip,
};

// Writes `array` as an IDX file of unsigned bytes. Throws Error(usage) when dims and
// data disagree or a dimension does not fit the format, Error(runtime) on I/O failure.
void write_idx(const std::filesystem::path& path, const IdxArray& array,
               IdxCompression compression = IdxCompression::by_extension);

}  // namespace tunescope::data
