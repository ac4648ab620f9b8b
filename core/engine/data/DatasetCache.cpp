// The per-split cache of load_dataset (DatasetCache.h).
#include "core/engine/data/DatasetCache.h"

#include <array>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <system_error>

namespace tunescope::data {

namespace {

namespace fs = std::filesystem;

// What a folder of data files holds, as far as a load can tell: each regular file's
// name, size and modification time. A folder that cannot be read gives an empty text
// (load_dataset then reports it).
std::string folder_fingerprint(const fs::path& dir) {
  std::string out;
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
    if (!entry.is_regular_file(ec)) continue;
    out += entry.path().filename().string();
    out += ':' + std::to_string(entry.file_size(ec));
    out += ':' + std::to_string(entry.last_write_time(ec).time_since_epoch().count()) + ';';
  }
  return out;
}

std::string key_of(std::string_view spec, Split split, const DataSourceOptions& options) {
  std::string key = std::string(spec) + '|' + to_string(split) + '|';
  if (spec == "fake") {
    const FakeDataOptions& f = options.fake;
    for (int64_t v : {f.train_count, f.test_count, f.channels, f.height, f.width,
                      static_cast<int64_t>(f.classes), static_cast<int64_t>(f.seed)})
      key += std::to_string(v) + ',';
    return key;
  }
  const fs::path dir = spec == "fashion-mnist" ? fashion_mnist_dir(options) : fs::path(spec);
  return key + dir.string() + '|' + folder_fingerprint(dir);
}

struct Entry {
  std::string key;
  std::shared_ptr<const Dataset> set;
  std::optional<ChannelStats> stats;
};

std::mutex mutex;
std::array<Entry, 2> latest;  // per split

}  // namespace

std::shared_ptr<const Dataset> load_dataset_shared(std::string_view spec, Split split,
                                                   const DataSourceOptions& options) {
  const std::string key = key_of(spec, split, options);
  Entry& entry = latest[split == Split::train ? 0 : 1];
  {
    const std::lock_guard lock(mutex);
    if (entry.set && entry.key == key) return entry.set;
  }
  // Loaded outside the lock: sessions built on other threads need not wait for it.
  auto set = std::make_shared<const Dataset>(load_dataset(spec, split, options));
  const std::lock_guard lock(mutex);
  entry = {key, set, std::nullopt};
  return set;
}

ChannelStats channel_stats_shared(const std::shared_ptr<const Dataset>& set) {
  {
    const std::lock_guard lock(mutex);
    for (const Entry& entry : latest)
      if (entry.set == set && entry.stats) return *entry.stats;
  }
  ChannelStats stats = compute_channel_stats(*set);
  const std::lock_guard lock(mutex);
  for (Entry& entry : latest)
    if (entry.set == set) entry.stats = stats;
  return stats;
}

}  // namespace tunescope::data
