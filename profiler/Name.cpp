#include "profiler/Name.h"

#include <atomic>
#include <mutex>
#include <ostream>
#include <unordered_set>

namespace tunescope::profiler {

namespace {

struct TextHash {
  using is_transparent = void;
  size_t operator()(std::string_view text) const noexcept {
    return std::hash<std::string_view>()(text);
  }
};

// Never destroyed: names may be read by other static objects' destructors.
struct Pool {
  std::mutex mutex;
  // Nodes never move, so a name's pointer stays valid as the set grows.
  std::unordered_set<std::string, TextHash, std::equal_to<>> texts;
  std::atomic<uint64_t> bytes{0};
};

Pool& pool() {
  static Pool* const instance = new Pool;
  return *instance;
}

}  // namespace

const std::string& Name::empty_text() {
  static const std::string* const empty = new std::string;
  return *empty;
}

Name::Name(std::string_view text) : text_(&empty_text()) {
  if (text.empty()) return;
  Pool& p = pool();
  std::lock_guard lock(p.mutex);
  auto it = p.texts.find(text);
  if (it == p.texts.end()) {
    it = p.texts.emplace(text).first;
    // The text's heap block (beyond the small-string buffer) and the set's node.
    p.bytes.fetch_add((it->capacity() > 15 ? it->capacity() + 1 : 0) + sizeof(std::string) + 16,
                      std::memory_order_relaxed);
  }
  text_ = &*it;
}

uint64_t Name::interned_bytes() { return pool().bytes.load(std::memory_order_relaxed); }

std::ostream& operator<<(std::ostream& out, Name name) { return out << name.str(); }

}  // namespace tunescope::profiler
