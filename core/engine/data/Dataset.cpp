// Loading IDX folders, generating fake data, and resolving data specs to a Dataset.
#include "core/engine/data/Dataset.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <numbers>
#include <system_error>

#include "core/base/Error.h"
#include "core/engine/data/IdxFile.h"
#include "core/engine/data/Random.h"

namespace tunescope::data {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kSpecForms =
    "a data spec is fashion-mnist, fake or a folder of MNIST-format IDX files";

struct SplitFiles {
  const char* images;
  const char* labels;
};

SplitFiles file_names(Split split) {
  if (split == Split::train) return {"train-images-idx3-ubyte", "train-labels-idx1-ubyte"};
  return {"t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"};
}

// The raw file if present, else the .gz one; empty when neither exists.
fs::path find_idx(const fs::path& dir, const char* base) {
  std::error_code ec;
  for (const fs::path& candidate : {dir / base, dir / (std::string(base) + ".gz")})
    if (fs::is_regular_file(candidate, ec)) return candidate;
  return {};
}

std::string folder_name(const fs::path& dir) {
  fs::path normal = dir.lexically_normal();
  if (!normal.has_filename()) normal = normal.parent_path();
  const std::string name = normal.filename().string();
  return name.empty() ? normal.string() : name;
}

void require_folder(const fs::path& dir, std::string_view what) {
  if (dir.empty()) fail(ErrorKind::input, what, ": no folder given (", kSpecForms, ")");
  std::error_code ec;
  const fs::file_status status = fs::status(dir, ec);
  if (!fs::exists(status))
    fail(ErrorKind::input, what, " '", dir.string(), "' does not exist (", kSpecForms, ")");
  if (!fs::is_directory(status))
    fail(ErrorKind::input, what, " '", dir.string(), "' is not a folder (", kSpecForms, ")");
}

// Fixed per (class, channel, position) and independent of the seed, so train and test
// splits drawn with different seeds share their classes. The grid has a one-pixel margin
// around the image for the random shift.
std::vector<float> class_patterns(int64_t channels, int64_t height, int64_t width, int classes) {
  constexpr double two_pi = 2 * std::numbers::pi;
  const int64_t gh = height + 2, gw = width + 2;
  std::vector<float> patterns(static_cast<size_t>(classes * channels * gh * gw));
  float* out = patterns.data();
  for (int k = 0; k < classes; ++k) {
    // Distinct orientations across classes, three spatial frequencies, and a blob on a
    // golden-angle spiral keep every pair of classes apart in several ways.
    const double theta = std::numbers::pi * k / classes;
    const double freq = 1.5 + k % 3;
    const double angle = two_pi * 0.381966 * k;
    const double cx = 0.5 + 0.28 * std::cos(angle), cy = 0.5 + 0.28 * std::sin(angle);
    for (int64_t c = 0; c < channels; ++c) {
      const double phase = two_pi * (0.13 * k + 0.29 * c);
      for (int64_t y = 0; y < gh; ++y) {
        const double v = (y - 1 + 0.5) / height;
        for (int64_t x = 0; x < gw; ++x) {
          const double u = (x - 1 + 0.5) / width;
          const double grating =
              0.5 +
              0.5 * std::cos(two_pi * freq * (u * std::cos(theta) + v * std::sin(theta)) + phase);
          const double r2 = (u - cx) * (u - cx) + (v - cy) * (v - cy);
          const double blob = std::exp(-r2 / (2 * 0.12 * 0.12));
          *out++ = static_cast<float>(0.1 + 0.35 * grating + 0.5 * blob);
        }
      }
    }
  }
  return patterns;
}

}  // namespace

std::string to_string(Split split) { return split == Split::train ? "train" : "test"; }

Dataset load_mnist_format(const fs::path& dir, Split split) {
  require_folder(dir, "data folder");
  const SplitFiles names = file_names(split);
  const fs::path image_path = find_idx(dir, names.images);
  const fs::path label_path = find_idx(dir, names.labels);
  if (image_path.empty() || label_path.empty()) {
    bool any = false;
    for (Split s : {Split::train, Split::test})
      any = any || !find_idx(dir, file_names(s).images).empty() ||
            !find_idx(dir, file_names(s).labels).empty();
    if (!any)
      fail(ErrorKind::input, "data folder '", dir.string(),
           "' holds no MNIST-format IDX files (expected train-images-idx3-ubyte, "
           "train-labels-idx1-ubyte, t10k-images-idx3-ubyte, t10k-labels-idx1-ubyte, each raw or "
           ".gz)");
    fail(ErrorKind::input, "data folder '", dir.string(), "' lacks ",
         image_path.empty() ? names.images : names.labels, " (raw or .gz) for the ",
         to_string(split), " split");
  }

  IdxArray images = read_idx(image_path);
  IdxArray labels = read_idx(label_path);
  if (images.dims.size() != 3 && images.dims.size() != 4)
    fail(ErrorKind::input, "IDX file '", image_path.string(),
         "': image data must have 3 (N x H x W) or 4 "
         "(N x H x W x C) dimensions, not ",
         idx_dims_text(images.dims));
  if (labels.dims.size() != 1)
    fail(ErrorKind::input, "IDX file '", label_path.string(),
         "': label data must have 1 dimension, not ", idx_dims_text(labels.dims));
  if (images.dims[0] != labels.dims[0])
    fail(ErrorKind::input, "image file '", image_path.string(), "' holds ", images.dims[0],
         " images but label file '", label_path.string(), "' holds ", labels.dims[0], " labels");
  if (images.dims[0] == 0)
    fail(ErrorKind::input, "IDX file '", image_path.string(), "' holds no images");
  if (images.element_count() == 0)
    fail(ErrorKind::input, "IDX file '", image_path.string(), "': images of size ",
         idx_dims_text(images.dims), " are empty");

  Dataset set;
  set.name = folder_name(dir) + "/" + to_string(split);
  set.count = images.dims[0];
  set.height = images.dims[1];
  set.width = images.dims[2];
  set.channels = images.dims.size() == 4 ? images.dims[3] : 1;
  set.images = std::move(images.data);
  set.labels.assign(labels.data.begin(), labels.data.end());
  set.num_classes = *std::max_element(labels.data.begin(), labels.data.end()) + 1;
  return set;
}

Dataset make_fake_dataset(int64_t count, int64_t channels, int64_t height, int64_t width,
                          int classes, uint64_t seed) {
  if (count < 0 || channels < 1 || height < 1 || width < 1 || classes < 1)
    fail(ErrorKind::usage,
         "fake data needs count >= 0 and channels, height, width, classes >= 1 (got ", count,
         " images of ", channels, "x", height, "x", width, ", ", classes, " classes)");

  Dataset set;
  set.name = "fake";
  set.count = count;
  set.channels = channels;
  set.height = height;
  set.width = width;
  set.num_classes = classes;

  set.labels.resize(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) set.labels[i] = static_cast<int32_t>(i % classes);
  SplitMix64 label_rng(mix_seed(seed, ~uint64_t{0}));
  shuffle_in_place(set.labels, label_rng);

  const std::vector<float> patterns = class_patterns(channels, height, width, classes);
  const int64_t gh = height + 2, gw = width + 2;
  // Irwin-Hall sum of four 16-bit uniforms: a near-Gaussian from one 64-bit draw.
  constexpr float kNoise = 0.12f;
  constexpr float kIrwinHallStd = 0.57735027f;  // sqrt(4 / 12)
  constexpr float kNoiseScale = kNoise / kIrwinHallStd / 65536.0f;

  set.images.resize(static_cast<size_t>(count * set.image_bytes()));
  uint8_t* out = set.images.data();
  for (int64_t i = 0; i < count; ++i) {
    // A stream per image: its noise does not depend on how many images came before.
    SplitMix64 rng(mix_seed(seed, static_cast<uint64_t>(i)));
    const float contrast = static_cast<float>(0.7 + 0.3 * rng.uniform());
    const int64_t dy = static_cast<int64_t>(rng.below(3)), dx = static_cast<int64_t>(rng.below(3));
    const float* pattern = patterns.data() + set.labels[i] * channels * gh * gw;
    for (int64_t y = 0; y < height; ++y)
      for (int64_t x = 0; x < width; ++x)
        for (int64_t c = 0; c < channels; ++c) {
          const uint64_t r = rng.next();
          const float sum = static_cast<float>((r & 0xFFFF) + (r >> 16 & 0xFFFF) +
                                               (r >> 32 & 0xFFFF) + (r >> 48));
          const float noise = (sum - 2 * 65536.0f) * kNoiseScale;
          const float value = contrast * pattern[(c * gh + y + dy) * gw + x + dx] + noise;
          // NOLINTNEXTLINE(bugprone-incorrect-roundings): non-negative, so +0.5 rounds right
          *out++ = static_cast<uint8_t>(std::clamp(value, 0.0f, 1.0f) * 255.0f + 0.5f);
        }
  }
  return set;
}

fs::path fashion_mnist_dir(const DataSourceOptions& options) {
  if (!options.data_dir.empty()) return options.data_dir;
  if (const char* env = std::getenv("TUNESCOPE_DATA_DIR"); env && *env) return env;
  return fs::path(kFashionMnistDir);
}

Dataset load_dataset(std::string_view spec, Split split, const DataSourceOptions& options) {
  if (spec.empty()) fail(ErrorKind::usage, "empty data spec (", kSpecForms, ")");
  if (spec == "fake") {
    const FakeDataOptions& fake = options.fake;
    const bool train = split == Split::train;
    Dataset set = make_fake_dataset(train ? fake.train_count : fake.test_count, fake.channels,
                                    fake.height, fake.width, fake.classes,
                                    train ? fake.seed : mix_seed(fake.seed, 0x7e57));
    set.name = "fake/" + to_string(split);
    return set;
  }
  if (spec == "fashion-mnist") {
    const fs::path dir = fashion_mnist_dir(options);
    std::error_code ec;
    if (!fs::is_directory(dir, ec))
      fail(ErrorKind::input, "Fashion-MNIST folder '", dir.string(),
           "' does not exist: install the Debian package dataset-fashion-mnist, set "
           "TUNESCOPE_DATA_DIR, "
           "or give a folder of IDX files as the data spec");
    Dataset set = load_mnist_format(dir, split);
    set.name = "fashion-mnist/" + to_string(split);
    return set;
  }
  return load_mnist_format(fs::path(spec), split);
}

}  // namespace tunescope::data
