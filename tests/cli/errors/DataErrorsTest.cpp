// Bad data folders and IDX files given to `tunescope profile --data DIR --trace OUT`:
// each exits 2 naming the file (or folder) and what is wrong with it, and leaves every
// file as it was, with no trace written. (A folder that does not exist is covered in
// tests/cli/CliTest.cpp; the readers' own cases in tests/core/engine/data/.)
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/engine/data/IdxFile.h"
#include "tests/cli/errors/ErrorCase.h"

namespace tunescope::test_support {
namespace {

constexpr uint32_t kCount = 16;

std::string big_endian(uint32_t value) {
  return {static_cast<char>(value >> 24), static_cast<char>(value >> 16),
          static_cast<char>(value >> 8), static_cast<char>(value)};
}

// An IDX file of unsigned bytes: magic 0x000008NN, the dims, then `payload` as given
// (which may disagree with the dims: that is the point of some cases).
std::string idx(const std::vector<uint32_t>& dims, const std::string& payload) {
  std::string bytes = big_endian(0x0800u | static_cast<uint32_t>(dims.size()));
  for (uint32_t d : dims) bytes += big_endian(d);
  return bytes + payload;
}

const std::string kImages = idx({kCount, 28, 28}, std::string(kCount * 28 * 28, '\x40'));
const std::string kLabels = idx({kCount}, std::string(kCount, '\x03'));

class DataErrors : public ::testing::Test {
 protected:
  // A folder of valid train and test files, as `--data` takes it.
  fs::path data_folder(const std::string& name) {
    const fs::path dir = folder.path() / name;
    fs::create_directories(dir);
    for (const char* split : {"train", "t10k"}) {
      write_file(dir / (std::string(split) + "-images-idx3-ubyte"), kImages);
      write_file(dir / (std::string(split) + "-labels-idx1-ubyte"), kLabels);
    }
    return dir;
  }
  std::string profile(const fs::path& data) const {
    return "profile --data " + data.string() +
           " --batch 8 --threads 1 --warmup 0 --steps 1 --trace " + folder.at("trace.json");
  }

  ScratchDir folder;
};

TEST_F(DataErrors, ValidFolderProfiles) {
  // The fixture itself is fine: each case below differs from it in one defect.
  const CliResult r = run_cli(profile(data_folder("valid")));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(fs::exists(folder.at("trace.json")));
}

TEST_F(DataErrors, MissingLabelFile) {
  const fs::path dir = data_folder("missing");
  fs::remove(dir / "train-labels-idx1-ubyte");
  expect_error(folder.path(),
               {profile(dir), {dir.string(), "lacks train-labels-idx1-ubyte", "train split"}});
}

TEST_F(DataErrors, TruncatedIdx) {
  const fs::path dir = data_folder("truncated");
  write_file(dir / "train-images-idx3-ubyte", kImages.substr(0, kImages.size() / 2));
  expect_error(folder.path(),
               {profile(dir), {(dir / "train-images-idx3-ubyte").string(), "truncated"}});
}

TEST_F(DataErrors, WrongMagic) {
  const fs::path dir = data_folder("magic");
  write_file(dir / "train-labels-idx1-ubyte",
             "PK" + kLabels.substr(2));  // a zip file's first bytes
  expect_error(
      folder.path(),
      {profile(dir), {(dir / "train-labels-idx1-ubyte").string(), "not an IDX file", "magic"}});
}

TEST_F(DataErrors, HeaderClaimsMoreItemsThanTheFileHolds) {
  const fs::path dir = data_folder("more");
  write_file(dir / "train-images-idx3-ubyte",
             idx({1000, 28, 28}, std::string(kCount * 28 * 28, '\x40')));
  expect_error(folder.path(),
               {profile(dir),
                {(dir / "train-images-idx3-ubyte").string(), "1000x28x28", "holds only 12544"}});
}

TEST_F(DataErrors, DimsWhoseProductOverflows) {
  const fs::path dir = data_folder("overflow");
  write_file(dir / "train-images-idx3-ubyte",
             idx({0xffffffffu, 0xffffffffu, 0xffffffffu}, std::string(64, '\0')));
  expect_error(folder.path(),
               {profile(dir), {(dir / "train-images-idx3-ubyte").string(), "overflow"}});
}

TEST_F(DataErrors, ImageAndLabelCountsDiffer) {
  const fs::path dir = data_folder("count");
  write_file(dir / "t10k-labels-idx1-ubyte", idx({kCount - 1}, std::string(kCount - 1, '\x01')));
  expect_error(folder.path(), {profile(dir),
                               {(dir / "t10k-images-idx3-ubyte").string(), "holds 16 images",
                                (dir / "t10k-labels-idx1-ubyte").string(), "holds 15 labels"}});
}

TEST_F(DataErrors, CorruptGzipStream) {
  const fs::path dir = data_folder("gzip");
  const fs::path raw = dir / "train-images-idx3-ubyte";
  const fs::path gz = dir / "train-images-idx3-ubyte.gz";
  data::write_idx(gz, data::read_idx(raw), data::IdxCompression::gzip);
  fs::remove(raw);
  std::string bytes = file_bytes(gz);
  for (size_t i = 12; i + 8 < bytes.size(); ++i)
    bytes[i] = static_cast<char>(bytes[i] ^ 0x5a);  // header and trailer kept
  write_file(gz, bytes);
  expect_error(folder.path(), {profile(dir), {gz.string(), "corrupt gzip stream"}});
}

TEST_F(DataErrors, EmptyFolder) {
  const fs::path dir = folder.path() / "empty";
  fs::create_directories(dir);
  expect_error(folder.path(), {profile(dir), {dir.string(), "holds no MNIST-format IDX files"}});
}

}  // namespace
}  // namespace tunescope::test_support
