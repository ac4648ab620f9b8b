// In-memory labelled image sets and where they come from: MNIST-format IDX folders
// (Fashion-MNIST by default) or synthetic "fake" data generated in memory.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace tunescope::data {

enum class Split { train, test };

std::string to_string(Split split);

// Images are bytes in IDX order: count x height x width x channels, row-major.
struct Dataset {
  std::string name;  // e.g. "fashion-mnist/train"
  int64_t count = 0;
  int64_t channels = 1;
  int64_t height = 0;
  int64_t width = 0;
  int num_classes = 0;  // labels lie in 0..num_classes-1
  std::vector<uint8_t> images;
  std::vector<int32_t> labels;

  int64_t image_bytes() const { return channels * height * width; }
  const uint8_t* image(int64_t index) const { return images.data() + index * image_bytes(); }
};

// Loads one split from a folder holding the standard file names
// {train,t10k}-{images-idx3,labels-idx1}-ubyte, each raw or with ".gz" (raw wins when
// both exist). Images may have 3 dimensions (N, H, W) or 4 (N, H, W, C); labels 1.
// num_classes is the largest label + 1. Throws Error(input) naming the folder for a
// missing or empty folder and a missing file, and naming both files when their
// counts disagree.
Dataset load_mnist_format(const std::filesystem::path& dir, Split split);

// Synthetic labelled images, deterministic per seed. Each class has a fixed pattern
// (an oriented grating plus a blob, the same for every seed and split) and each image is
// its class pattern with random contrast, a shift of up to one pixel and noise, so a
// model can learn it and accuracy on it means something. Labels are balanced (class
// counts differ by at most one) and in random order.
Dataset make_fake_dataset(int64_t count, int64_t channels, int64_t height, int64_t width,
                          int classes, uint64_t seed);

struct FakeDataOptions {
  // Fashion-MNIST's sizes by default, so real and fake runs time the same work.
  int64_t train_count = 60000;
  int64_t test_count = 10000;
  int64_t channels = 1;
  int64_t height = 28;
  int64_t width = 28;
  int classes = 10;
  uint64_t seed = 1;  // the test split derives its own seed from this
};

struct DataSourceOptions {
  // Folder for "fashion-mnist"; empty: $TUNESCOPE_DATA_DIR, else kFashionMnistDir.
  std::filesystem::path data_dir;
  FakeDataOptions fake;
};

inline constexpr std::string_view kFashionMnistDir = "/usr/share/datasets/fashion-mnist";

// The folder "fashion-mnist" resolves to under `options` and the environment.
std::filesystem::path fashion_mnist_dir(const DataSourceOptions& options = {});

// Resolves a data spec: "fashion-mnist", "fake", or a path to a folder of IDX files.
// A spec that is neither keyword is taken as a path, so an error for it names the path
// and lists the accepted forms.
Dataset load_dataset(std::string_view spec, Split split, const DataSourceOptions& options = {});

}  // namespace tunescope::data
