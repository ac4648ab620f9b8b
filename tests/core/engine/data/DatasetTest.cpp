// Dataset loading from IDX folders and data specs, and the properties of fake data.
#include "core/engine/data/Dataset.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/engine/data/DataLoader.h"
#include "core/engine/data/IdxFile.h"
#include "tests/core/ScopedEnv.h"
#include "tests/core/engine/data/DataTestSupport.h"

namespace tunescope::data {
namespace {

namespace fs = std::filesystem;
using test_support::expect_error;
using test_support::ScratchDir;

// Writes a small split in MNIST layout: image i is filled with byte i, label i % 10.
void write_split(const fs::path& dir, const std::string& prefix, int64_t images, int64_t labels,
                 const std::string& suffix = "", std::vector<int64_t> image_dims = {6, 5}) {
  IdxArray image_array;
  image_array.dims = {images};
  image_array.dims.insert(image_array.dims.end(), image_dims.begin(), image_dims.end());
  image_array.data.resize(static_cast<size_t>(image_array.element_count()));
  const int64_t per_image = images ? image_array.element_count() / images : 0;
  for (size_t i = 0; i < image_array.data.size(); ++i)
    image_array.data[i] = static_cast<uint8_t>(i / per_image);
  IdxArray label_array{{labels}, {}};
  for (int64_t i = 0; i < labels; ++i) label_array.data.push_back(static_cast<uint8_t>(i % 10));
  write_idx(dir / (prefix + "-images-idx3-ubyte" + suffix), image_array);
  write_idx(dir / (prefix + "-labels-idx1-ubyte" + suffix), label_array);
}

std::vector<int64_t> class_counts(const Dataset& set) {
  std::vector<int64_t> counts(static_cast<size_t>(set.num_classes), 0);
  for (int32_t label : set.labels) ++counts.at(static_cast<size_t>(label));
  return counts;
}

TEST(Dataset, LoadsFashionMnist) {
  const fs::path dir(kFashionMnistDir);
  if (!fs::is_directory(dir))
    GTEST_SKIP() << dir << " is missing: install the Debian package dataset-fashion-mnist";
  DataSourceOptions options;
  options.data_dir = dir;  // ignore any TUNESCOPE_DATA_DIR of the caller
  for (auto [split, count] : {std::pair{Split::train, 60000}, std::pair{Split::test, 10000}}) {
    const Dataset set = load_dataset("fashion-mnist", split, options);
    EXPECT_EQ(set.name, "fashion-mnist/" + to_string(split));
    EXPECT_EQ(set.count, count);
    EXPECT_EQ(set.height, 28);
    EXPECT_EQ(set.width, 28);
    EXPECT_EQ(set.channels, 1);
    EXPECT_EQ(set.num_classes, 10);
    ASSERT_EQ(set.images.size(), static_cast<size_t>(count) * 784);
    // Fashion-MNIST is exactly balanced.
    for (int64_t n : class_counts(set)) EXPECT_EQ(n, count / 10);
    if (split == Split::train) {
      // The published statistics, as a check on the decoded pixels themselves.
      const ChannelStats stats = compute_channel_stats(set);
      EXPECT_NEAR(stats.mean[0], 0.2860, 5e-4);
      EXPECT_NEAR(stats.stddev[0], 0.3530, 5e-4);
    }
  }
}

TEST(Dataset, LoadsRawAndGzipFolders) {
  ScratchDir dir;
  write_split(dir.path(), "train", 12, 12);
  write_split(dir.path(), "t10k", 3, 3, ".gz", {4, 5, 3});
  const Dataset train = load_dataset(dir.path().string(), Split::train);
  EXPECT_EQ(train.name, dir.path().filename().string() + "/train");
  EXPECT_EQ(train.count, 12);
  EXPECT_EQ(train.height, 6);
  EXPECT_EQ(train.width, 5);
  EXPECT_EQ(train.channels, 1);
  EXPECT_EQ(train.num_classes, 10);
  EXPECT_EQ(train.image(7)[29], 7);
  EXPECT_EQ(train.labels[11], 1);
  // A trailing slash names the same folder.
  EXPECT_EQ(load_mnist_format(dir.path().string() + "/", Split::train).name, train.name);

  const Dataset test = load_mnist_format(dir.path(), Split::test);
  EXPECT_EQ(test.count, 3);
  EXPECT_EQ(test.height, 4);
  EXPECT_EQ(test.width, 5);
  EXPECT_EQ(test.channels, 3);
  EXPECT_EQ(test.num_classes, 3);  // largest label + 1
  EXPECT_EQ(test.image(2)[59], 2);
}

TEST(Dataset, FashionMnistFolderFollowsOptionsThenEnvironment) {
  ScratchDir env_dir, option_dir;
  write_split(env_dir.path(), "train", 4, 4);
  write_split(option_dir.path(), "train", 7, 7);
  const tunescope::test_support::ScopedEnv env("TUNESCOPE_DATA_DIR", env_dir.path().string());
  EXPECT_EQ(fashion_mnist_dir(), env_dir.path());
  EXPECT_EQ(load_dataset("fashion-mnist", Split::train).count, 4);
  DataSourceOptions options;
  options.data_dir = option_dir.path();
  EXPECT_EQ(load_dataset("fashion-mnist", Split::train, options).count, 7);

  const tunescope::test_support::ScopedEnv missing("TUNESCOPE_DATA_DIR",
                                                   (env_dir / "gone").string());
  expect_error(ErrorKind::input, [] { load_dataset("fashion-mnist", Split::train); },
               {(env_dir / "gone").string(), "dataset-fashion-mnist", "TUNESCOPE_DATA_DIR"});
}

TEST(Dataset, RejectsMismatchedCounts) {
  ScratchDir dir;
  write_split(dir.path(), "train", 5, 4);
  expect_error(
      ErrorKind::input, [&] { load_mnist_format(dir.path(), Split::train); },
      {"train-images-idx3-ubyte", "train-labels-idx1-ubyte", "holds 5 images", "holds 4 labels"});
}

TEST(Dataset, RejectsWrongDimensionCounts) {
  ScratchDir dir;
  write_split(dir.path(), "train", 5, 5, "", {30});
  expect_error(ErrorKind::input, [&] { load_mnist_format(dir.path(), Split::train); },
               {"train-images-idx3-ubyte", "3 (N x H x W) or 4", "5x30"});
  write_split(dir.path(), "train", 5, 5);
  write_idx(dir / "train-labels-idx1-ubyte", IdxArray{{5, 1}, std::vector<uint8_t>(5)});
  expect_error(ErrorKind::input, [&] { load_mnist_format(dir.path(), Split::train); },
               {"train-labels-idx1-ubyte", "1 dimension", "5x1"});
}

TEST(Dataset, RejectsMissingEmptyOrIncompleteFolders) {
  ScratchDir dir;
  const std::string missing = (dir / "absent").string();
  expect_error(ErrorKind::input, [&] { load_dataset(missing, Split::train); },
               {missing, "does not exist", "fake"});
  expect_error(ErrorKind::input, [&] { load_dataset(dir.path().string(), Split::train); },
               {dir.path().string(), "holds no MNIST-format IDX files"});
  write_split(dir.path(), "train", 2, 2);
  expect_error(ErrorKind::input, [&] { load_dataset(dir.path().string(), Split::test); },
               {dir.path().string(), "lacks t10k-images-idx3-ubyte"});
  write_split(dir.path(), "t10k", 0, 0);
  expect_error(ErrorKind::input, [&] { load_dataset(dir.path().string(), Split::test); },
               {"holds no images"});
  expect_error(ErrorKind::input,
               [&] { load_dataset((dir / "train-images-idx3-ubyte").string(), Split::train); },
               {"is not a folder"});
  expect_error(ErrorKind::usage, [] { load_dataset("", Split::train); }, {"empty data spec"});
}

TEST(Dataset, FakeDataIsDeterministicPerSeed) {
  const Dataset a = make_fake_dataset(64, 3, 8, 9, 5, 42);
  const Dataset b = make_fake_dataset(64, 3, 8, 9, 5, 42);
  const Dataset c = make_fake_dataset(64, 3, 8, 9, 5, 43);
  EXPECT_EQ(a.images.size(), 64u * 3 * 8 * 9);
  EXPECT_EQ(a.images, b.images);
  EXPECT_EQ(a.labels, b.labels);
  EXPECT_NE(a.images, c.images);
  EXPECT_NE(a.labels, c.labels);
  EXPECT_EQ(a.num_classes, 5);
  EXPECT_EQ(a.channels, 3);
}

TEST(Dataset, FakeDataIsClassBalancedAndShuffled) {
  const Dataset set = make_fake_dataset(103, 1, 4, 4, 10, 7);
  for (int64_t n : class_counts(set)) EXPECT_TRUE(n == 10 || n == 11) << n;
  int in_cyclic_order = 0;
  for (int64_t i = 0; i < set.count; ++i) in_cyclic_order += set.labels[i] == i % 10;
  EXPECT_LT(in_cyclic_order, 50);
}

// Nearest class mean, fitted on one split and scored on another drawn with a different
// seed: accuracy far above chance shows the classes are learnable and shared by splits.
TEST(Dataset, FakeDataIsLearnableAcrossSplits) {
  DataSourceOptions options;
  options.fake.train_count = 1000;
  options.fake.test_count = 300;
  options.fake.channels = 2;
  options.fake.height = 20;
  options.fake.width = 24;
  const Dataset train = load_dataset("fake", Split::train, options);
  const Dataset test = load_dataset("fake", Split::test, options);
  EXPECT_EQ(train.name, "fake/train");
  EXPECT_EQ(test.count, 300);
  EXPECT_NE(std::vector<uint8_t>(train.images.begin(), train.images.begin() + 960),
            std::vector<uint8_t>(test.images.begin(), test.images.begin() + 960));

  const int64_t size = train.image_bytes();
  std::vector<double> means(static_cast<size_t>(train.num_classes * size), 0.0);
  const std::vector<int64_t> counts = class_counts(train);
  for (int64_t i = 0; i < train.count; ++i)
    for (int64_t p = 0; p < size; ++p)
      means[train.labels[i] * size + p] +=
          train.image(i)[p] / static_cast<double>(counts[train.labels[i]]);
  int correct = 0;
  for (int64_t i = 0; i < test.count; ++i) {
    int best = -1;
    double best_distance = 0;
    for (int k = 0; k < train.num_classes; ++k) {
      double distance = 0;
      for (int64_t p = 0; p < size; ++p)
        distance += std::pow(test.image(i)[p] - means[k * size + p], 2);
      if (best < 0 || distance < best_distance) best = k, best_distance = distance;
    }
    correct += best == test.labels[i];
  }
  EXPECT_GT(correct, test.count * 95 / 100);
}

TEST(Dataset, FakeDataRejectsBadShapes) {
  expect_error(ErrorKind::usage, [] { make_fake_dataset(10, 0, 28, 28, 10, 1); }, {"channels"});
  expect_error(ErrorKind::usage, [] { make_fake_dataset(-1, 1, 28, 28, 10, 1); }, {"count"});
}

}  // namespace
}  // namespace tunescope::data
