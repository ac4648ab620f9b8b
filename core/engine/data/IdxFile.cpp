// IDX reader and writer: one header parser over two byte sources (raw file, gzip stream).
#include "core/engine/data/IdxFile.h"

#include <zlib.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <system_error>

#include "core/base/Error.h"

namespace tunescope::data {

namespace fs = std::filesystem;

namespace {

template <typename... Parts>
[[noreturn]] void bad_file(const fs::path& path, const Parts&... parts) {
  fail(ErrorKind::input, "IDX file '", path.string(), "': ", parts...);
}

std::string hex(uint32_t value, int digits) {
  char text[16];
  std::snprintf(text, sizeof text, "0x%0*X", digits, static_cast<unsigned>(value));
  return text;
}

const char* type_name(uint8_t code) {
  switch (code) {
    case 0x08: return "unsigned byte";
    case 0x09: return "signed byte";
    case 0x0B: return "int16";
    case 0x0C: return "int32";
    case 0x0D: return "float32";
    case 0x0E: return "float64";
    default: return "not an IDX type";
  }
}

uint32_t load_be32(const uint8_t* p) {
  return uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | uint32_t{p[3]};
}

void store_be32(uint8_t* p, uint32_t v) {
  p[0] = static_cast<uint8_t>(v >> 24);
  p[1] = static_cast<uint8_t>(v >> 16);
  p[2] = static_cast<uint8_t>(v >> 8);
  p[3] = static_cast<uint8_t>(v);
}

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using FilePtr = std::unique_ptr<std::FILE, FileCloser>;

FilePtr open_for_reading(const fs::path& path) {
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (!fs::exists(status)) bad_file(path, "does not exist");
  if (!fs::is_regular_file(status)) bad_file(path, "is not a regular file");
  FilePtr file(std::fopen(path.c_str(), "rb"));
  if (!file) bad_file(path, "cannot open: ", std::strerror(errno));
  return file;
}

// Size of the rest of an open file, or -1 when it cannot be told.
int64_t remaining_bytes(std::FILE* file) {
  const long here = std::ftell(file);
  if (here < 0 || std::fseek(file, 0, SEEK_END) != 0) return -1;
  const long end = std::ftell(file);
  std::fseek(file, here, SEEK_SET);
  return end < here ? -1 : end - here;
}

// The decoded bytes of a file, read front to back.
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Reads up to n bytes; returns fewer only at the end of the data.
  virtual size_t read(uint8_t* dst, size_t n) = 0;
  // The number of bytes still to come as far as is cheaply known (exact for raw
  // files); used only to size the first allocation.
  virtual int64_t size_hint() const = 0;
};

class RawSource final : public ByteSource {
 public:
  RawSource(const fs::path& path, FilePtr file) : path_(path), file_(std::move(file)) {
    size_ = remaining_bytes(file_.get());
  }

  size_t read(uint8_t* dst, size_t n) override {
    if (n == 0) return 0;  // dst may be the null data() of an empty vector
    const size_t got = std::fread(dst, 1, n, file_.get());
    if (got < n && std::ferror(file_.get())) bad_file(path_, "read error: ", std::strerror(errno));
    consumed_ += static_cast<int64_t>(got);
    return got;
  }

  int64_t size_hint() const override { return size_ < 0 ? -1 : size_ - consumed_; }

 private:
  const fs::path path_;
  FilePtr file_;
  int64_t size_ = -1;
  int64_t consumed_ = 0;
};

// Inflates a gzip file, including files of several concatenated members (as gzip
// itself writes them). Bytes after the last member are reported as garbage.
class GzipSource final : public ByteSource {
 public:
  GzipSource(const fs::path& path, FilePtr file) : path_(path), file_(std::move(file)) {
    compute_hint();
    if (inflateInit2(&stream_, 16 + MAX_WBITS) != Z_OK)
      fail(ErrorKind::runtime, "IDX file '", path_.string(), "': cannot initialise zlib");
  }
  ~GzipSource() override { inflateEnd(&stream_); }
  GzipSource(const GzipSource&) = delete;
  GzipSource& operator=(const GzipSource&) = delete;

  size_t read(uint8_t* dst, size_t n) override {
    size_t done = 0;
    while (done < n) {
      if (stream_.avail_in == 0 && !refill()) {
        if (member_ended_) break;
        bad_file(path_, "gzip stream is truncated (the file ends inside compressed data)");
      }
      if (member_ended_) {
        // Either another gzip member follows or the container has junk appended.
        if (stream_.next_in[0] != 0x1f)
          bad_file(path_, "unexpected bytes after the end of the gzip stream");
        inflateReset(&stream_);
        member_ended_ = false;
      }
      const size_t chunk = std::min<size_t>(n - done, std::numeric_limits<uInt>::max());
      stream_.next_out = dst + done;
      stream_.avail_out = static_cast<uInt>(chunk);
      const int rc = inflate(&stream_, Z_NO_FLUSH);
      done += chunk - stream_.avail_out;
      if (rc == Z_STREAM_END) {
        member_ended_ = true;
      } else if (rc == Z_DATA_ERROR || rc == Z_NEED_DICT) {
        bad_file(path_, "corrupt gzip stream: ", stream_.msg ? stream_.msg : "invalid data");
      } else if (rc == Z_MEM_ERROR) {
        fail(ErrorKind::runtime, "IDX file '", path_.string(), "': out of memory inflating");
      }
      // Z_OK and Z_BUF_ERROR (no progress until more input) continue the loop.
    }
    consumed_ += static_cast<int64_t>(done);
    return done;
  }

  int64_t size_hint() const override {
    return hint_ < 0 ? -1 : std::max<int64_t>(hint_ - consumed_, 0);
  }

 private:
  bool refill() {
    const size_t got = std::fread(buffer_.data(), 1, buffer_.size(), file_.get());
    if (got == 0 && std::ferror(file_.get())) bad_file(path_, "read error: ", std::strerror(errno));
    stream_.next_in = buffer_.data();
    stream_.avail_in = static_cast<uInt>(got);
    return got > 0;
  }

  // gzip's trailer holds the uncompressed size modulo 2^32. Bounded by deflate's
  // maximum ratio (about 1032:1) it is a safe guess even for a damaged trailer.
  void compute_hint() {
    const int64_t compressed = remaining_bytes(file_.get());
    if (compressed < 18 || std::fseek(file_.get(), -4, SEEK_END) != 0) return;
    uint8_t t[4];
    const bool ok = std::fread(t, 1, 4, file_.get()) == 4;
    std::rewind(file_.get());
    if (!ok) return;
    const int64_t isize =
        uint32_t{t[0]} | uint32_t{t[1]} << 8 | uint32_t{t[2]} << 16 | uint32_t{t[3]} << 24;
    hint_ = std::min(isize, compressed * 1032);
  }

  const fs::path path_;
  FilePtr file_;
  z_stream stream_{};
  std::array<uint8_t, 256 * 1024> buffer_{};
  bool member_ended_ = false;
  int64_t hint_ = -1;
  int64_t consumed_ = 0;
};

std::unique_ptr<ByteSource> open_source(const fs::path& path) {
  FilePtr file = open_for_reading(path);
  uint8_t magic[2] = {0, 0};
  const size_t got = std::fread(magic, 1, 2, file.get());
  std::rewind(file.get());
  if (got == 2 && magic[0] == 0x1f && magic[1] == 0x8b)
    return std::make_unique<GzipSource>(path, std::move(file));
  return std::make_unique<RawSource>(path, std::move(file));
}

void read_exact_header(ByteSource& source, const fs::path& path, uint8_t* dst, size_t n,
                       size_t header_so_far) {
  const size_t got = source.read(dst, n);
  if (got < n) bad_file(path, "file ends inside the header after ", header_so_far + got, " bytes");
}

}  // namespace

std::string idx_dims_text(const std::vector<int64_t>& dims) {
  std::string text;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) text += 'x';
    text += std::to_string(dims[i]);
  }
  return text;
}

int64_t IdxArray::element_count() const {
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  return count;
}

IdxArray read_idx(const fs::path& path, const IdxReadOptions& options) {
  std::unique_ptr<ByteSource> source = open_source(path);

  uint8_t magic[4];
  read_exact_header(*source, path, magic, 4, 0);
  const uint32_t magic_value = load_be32(magic);
  if (magic[0] != 0 || magic[1] != 0)
    bad_file(path, "not an IDX file: magic ", hex(magic_value, 8),
             " does not start with two zero bytes (expected 0x000008NN)");
  if (magic[2] != kIdxTypeUint8)
    bad_file(path, "unsupported element type code ", hex(magic[2], 2), " (", type_name(magic[2]),
             "); only ", hex(kIdxTypeUint8, 2), " (unsigned byte) is supported");
  const int ndims = magic[3];
  if (ndims < 1 || ndims > kIdxMaxDims)
    bad_file(path, "dimension count ", ndims, " in magic ", hex(magic_value, 8), " is outside 1..",
             kIdxMaxDims);

  std::array<uint8_t, 4 * kIdxMaxDims> raw_dims{};
  read_exact_header(*source, path, raw_dims.data(), 4 * static_cast<size_t>(ndims), 4);

  IdxArray array;
  array.dims.resize(ndims);
  int64_t total = 1;
  bool overflow = false;
  for (int i = 0; i < ndims; ++i) {
    array.dims[i] = load_be32(&raw_dims[4 * i]);
    overflow = overflow || __builtin_mul_overflow(total, array.dims[i], &total);
  }
  if (overflow)
    bad_file(path, "dimensions ", idx_dims_text(array.dims), " overflow a 64-bit element count");
  if (total > options.max_bytes)
    bad_file(path, "dimensions ", idx_dims_text(array.dims), " claim ", total,
             " bytes of data, more than the limit of ", options.max_bytes);

  // Grow towards the claimed size instead of trusting it: a header claiming gigabytes
  // in a small file must fail on truncation, not on allocation.
  const int64_t hint = source->size_hint();
  size_t capacity = static_cast<size_t>(std::min<int64_t>(total, std::max<int64_t>(hint, 1 << 20)));
  size_t have = 0;
  for (;;) {
    array.data.resize(capacity);
    have += source->read(array.data.data() + have, capacity - have);
    if (have < capacity || capacity == static_cast<size_t>(total)) break;
    capacity = static_cast<size_t>(std::min<int64_t>(total, static_cast<int64_t>(capacity) * 2));
  }
  if (static_cast<int64_t>(have) < total)
    bad_file(path, "header claims ", idx_dims_text(array.dims), " = ", total,
             " bytes of data but the file holds only ", have, " (truncated)");

  uint8_t scratch[4096];
  int64_t extra = 0;
  for (size_t got; (got = source->read(scratch, sizeof scratch)) > 0;)
    extra += static_cast<int64_t>(got);
  if (extra > 0)
    bad_file(path, extra, " unexpected bytes after the ", total, " bytes of data the header (",
             idx_dims_text(array.dims), ") describes");
  return array;
}

void write_idx(const fs::path& path, const IdxArray& array, IdxCompression compression) {
  const int ndims = static_cast<int>(array.dims.size());
  if (ndims < 1 || ndims > kIdxMaxDims)
    fail(ErrorKind::usage, "write_idx '", path.string(), "': dimension count ", ndims,
         " is outside 1..", kIdxMaxDims);
  std::vector<uint8_t> header(4 + 4 * static_cast<size_t>(ndims));
  header[2] = kIdxTypeUint8;
  header[3] = static_cast<uint8_t>(ndims);
  for (int i = 0; i < ndims; ++i) {
    if (array.dims[i] < 0 || array.dims[i] > std::numeric_limits<uint32_t>::max())
      fail(ErrorKind::usage, "write_idx '", path.string(), "': dimension ", array.dims[i],
           " does not fit the format's 32-bit sizes");
    store_be32(&header[4 + 4 * i], static_cast<uint32_t>(array.dims[i]));
  }
  if (array.element_count() != static_cast<int64_t>(array.data.size()))
    fail(ErrorKind::usage, "write_idx '", path.string(), "': dimensions ",
         idx_dims_text(array.dims), " describe ", array.element_count(),
         " bytes but the data holds ", array.data.size());

  const bool gzip = compression == IdxCompression::gzip ||
                    (compression == IdxCompression::by_extension && path.extension() == ".gz");
  auto io_error = [&](const char* what) {
    fail(ErrorKind::runtime, "cannot write IDX file '", path.string(), "': ", what);
  };
  if (gzip) {
    gzFile out = gzopen(path.c_str(), "wb");
    if (!out) io_error(errno ? std::strerror(errno) : "gzopen failed");
    bool ok = gzwrite(out, header.data(), static_cast<unsigned>(header.size())) ==
              static_cast<int>(header.size());
    constexpr size_t kChunk = size_t{1} << 30;  // gzwrite takes an unsigned int length
    for (size_t at = 0; ok && at < array.data.size(); at += kChunk) {
      const unsigned n = static_cast<unsigned>(std::min(kChunk, array.data.size() - at));
      ok = gzwrite(out, array.data.data() + at, n) == static_cast<int>(n);
    }
    if (gzclose(out) != Z_OK || !ok) io_error("gzip write failed");
    return;
  }
  FilePtr out(std::fopen(path.c_str(), "wb"));
  if (!out) io_error(std::strerror(errno));
  bool ok = std::fwrite(header.data(), 1, header.size(), out.get()) == header.size() &&
            (array.data.empty() ||  // an empty vector's data() may be null, which fwrite forbids
             std::fwrite(array.data.data(), 1, array.data.size(), out.get()) == array.data.size());
  if (std::fclose(out.release()) != 0 || !ok) io_error(std::strerror(errno));
}

}  // namespace tunescope::data
