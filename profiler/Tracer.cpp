// The CPU tracer: per-thread append-only chunk lists written without locks, merged
// into a Trace by collect().
#include "profiler/Tracer.h"

#include <algorithm>
#include <array>
#include <set>
#include <thread>
#include <unordered_map>
#include <utility>

namespace tunescope::profiler {

namespace {

// One activity or range as recorded: fixed size and trivially copyable, so that an
// append is a handful of stores. Names stay pointers until collect().
struct Record {
  const char* name;
  int64_t start_ns;
  int64_t end_ns;
  double flops;
  double bytes;
  uint64_t range_id;  // ranges: their id
  int32_t device;
  int32_t lane;
  bool is_range;
  uint8_t kind;  // ActivityKind or RangeCategory, by is_range
};

// Large enough that chunk allocation is rare (one per ~4k kernels), small enough that
// an idle thread's first record costs little memory (~230 KiB).
constexpr size_t kChunkRecords = 4096;

struct Chunk {
  std::array<Record, kChunkRecords> records;
  Chunk* next = nullptr;
};

// Ids are never reused, so a thread's cache entry for a destroyed tracer can never be
// mistaken for a live one.
std::atomic<uint64_t> g_next_tracer_id{1};

}  // namespace

// Written by its owner thread only; read by collect()/record_count() on other threads.
// `published` is the hand-over point: the owner stores it with release after each
// record, readers load it with acquire and read exactly that many records.
struct Tracer::ThreadBuffer {
  explicit ThreadBuffer(std::thread::id owner_thread) : owner(owner_thread) {}
  ~ThreadBuffer() { free_chunks(head); }
  ThreadBuffer(const ThreadBuffer&) = delete;
  ThreadBuffer& operator=(const ThreadBuffer&) = delete;

  void append(const Record& record) {
    // Acquire, not relaxed: the write position may last have been set by clear() on
    // the collecting thread, or by an exited thread whose id this one inherited (and
    // with it this buffer). Free on x86.
    const size_t count = published.load(std::memory_order_acquire);
    if (tail == nullptr || tail_used == kChunkRecords) grow();
    tail->records[tail_used++] = record;
    published.store(count + 1, std::memory_order_release);
  }

  // Calls visit(record) for every published record, oldest first.
  template <typename Visit>
  void for_each(Visit visit) const {
    size_t left = published.load(std::memory_order_acquire);
    for (const Chunk* chunk = head; chunk && left > 0; chunk = chunk->next) {
      const size_t n = std::min(left, kChunkRecords);
      for (size_t i = 0; i < n; ++i) visit(chunk->records[i]);
      left -= n;
    }
  }

  // Keeps the chunks, like std::vector::clear keeps capacity: the first touch of fresh
  // chunk memory (page faults) costs more than the append itself, so a tracer reused
  // across runs records at full speed from the second run on. The memory is at most
  // that of the largest run so far and goes with the tracer.
  void clear() {
    tail = head;
    tail_used = 0;
    published.store(0, std::memory_order_release);
  }

  const std::thread::id owner;
  std::atomic<size_t> published{0};

 private:
  // Moves to the next chunk, reusing one kept by clear() when there is one.
  void grow() {
    if (tail == nullptr) {
      head = new Chunk;
      tail = head;
    } else {
      if (tail->next == nullptr) tail->next = new Chunk;
      tail = tail->next;
    }
    tail_used = 0;
  }

  // A loop rather than owning `next` pointers: recursive destruction of a long run's
  // thousands of chunks could overflow the stack.
  static void free_chunks(Chunk* chunk) {
    while (chunk) delete std::exchange(chunk, chunk->next);
  }

  Chunk* head = nullptr;
  Chunk* tail = nullptr;
  size_t tail_used = 0;
};

// std::less<> allows lookup by string_view without building a std::string; set nodes
// never move, so c_str() of an element stays valid for the tracer's lifetime.
struct Tracer::NameTable {
  std::set<std::string, std::less<>> names;
};

Tracer::Tracer()
    : id_(g_next_tracer_id.fetch_add(1, std::memory_order_relaxed)),
      names_(std::make_unique<NameTable>()) {}

Tracer::~Tracer() = default;

void Tracer::attach_device_tracer(std::unique_ptr<DeviceTracer> device) {
  device_ = std::move(device);
}

void Tracer::start() {
  if (device_ && !device_started_) {
    device_error_.clear();
    device_started_ = device_->start();
    if (!device_started_) {
      for (const std::string& error : device_->errors())
        device_error_ += (device_error_.empty() ? "" : "; ") + error;
      if (device_error_.empty()) device_error_ = device_->name() + " did not start";
    }
  }
  recording_.store(true, std::memory_order_relaxed);
}

void Tracer::stop() {
  recording_.store(false, std::memory_order_relaxed);
  if (device_started_) device_->stop();
  device_started_ = false;
}

const char* Tracer::intern(std::string_view name) {
  std::lock_guard lock(mutex_);
  auto it = names_->names.find(name);
  if (it == names_->names.end()) it = names_->names.emplace(name).first;
  return it->c_str();
}

Tracer::ThreadBuffer& Tracer::buffer_for_this_thread() {
  // A few slots cover every tracer a thread realistically alternates between; slot 0
  // holds the most recently used one so the common case is a single compare. An
  // evicted tracer is found again under the mutex by owner thread, so eviction never
  // splits a thread's records over two buffers.
  struct Slot {
    uint64_t tracer_id = 0;
    ThreadBuffer* buffer = nullptr;
  };
  constexpr size_t kSlots = 8;
  thread_local std::array<Slot, kSlots> cache;

  if (cache[0].tracer_id == id_) return *cache[0].buffer;
  for (size_t i = 1; i < kSlots; ++i) {
    if (cache[i].tracer_id == id_) {
      std::swap(cache[0], cache[i]);
      return *cache[0].buffer;
    }
  }

  ThreadBuffer* buffer = nullptr;
  {
    const auto self = std::this_thread::get_id();
    std::lock_guard lock(mutex_);
    for (const auto& candidate : buffers_)
      if (candidate->owner == self) buffer = candidate.get();
    if (!buffer) buffer = buffers_.emplace_back(std::make_unique<ThreadBuffer>(self)).get();
  }
  std::move_backward(cache.begin(), cache.end() - 1, cache.end());
  cache[0] = {id_, buffer};
  return *buffer;
}

void Tracer::record_activity(ActivityKind kind, const char* name, int device, int stream,
                             int64_t start_ns, int64_t end_ns, double flops, double bytes) {
  // Checked again here (KernelScope checks at construction) so that a scope which
  // outlives stop() does not leak into the next trace.
  if (!recording()) return;
  buffer_for_this_thread().append(Record{name, start_ns, end_ns, flops, bytes, 0, device, stream,
                                         false, static_cast<uint8_t>(kind)});
}

void Tracer::record_range(const char* name, RangeCategory category, int device, int lane,
                          int64_t start_ns, int64_t end_ns, uint64_t id) {
  if (!recording()) return;
  buffer_for_this_thread().append(
      Record{name, start_ns, end_ns, 0, 0, id, device, lane, true, static_cast<uint8_t>(category)});
}

void Tracer::record_flow(const Flow& flow) {
  if (!recording()) return;
  std::lock_guard lock(mutex_);
  flows_.push_back(flow);
}

Trace Tracer::collect(TraceMetadata metadata) {
  Trace trace;
  trace.metadata = std::move(metadata);
  {
    std::lock_guard lock(mutex_);
    // Ranges are a few per iteration against many kernels: reserving the total for
    // activities avoids a counting pass at a small cost in memory.
    size_t total = 0;
    for (const auto& buffer : buffers_) total += buffer->published.load(std::memory_order_acquire);
    trace.activities.reserve(total);
    std::unordered_map<const char*, Name> names;

    for (const auto& buffer : buffers_) {
      buffer->for_each([&](const Record& r) {
        // Records share the tracer's name pointers: intern each pointer's text once.
        auto [known, added] = names.try_emplace(r.name);
        if (added) known->second = Name(r.name ? r.name : "");
        const Name name = known->second;
        if (r.is_range) {
          Range range;
          range.name = name;
          range.category = static_cast<RangeCategory>(r.kind);
          range.start_ns = r.start_ns;
          range.end_ns = r.end_ns;
          range.device = r.device;
          range.lane = r.lane;
          range.id = r.range_id;
          trace.ranges.push_back(range);
        } else {
          Activity a;
          a.kind = static_cast<ActivityKind>(r.kind);
          a.name = name;
          a.device = r.device;
          a.stream = r.lane;
          a.start_ns = r.start_ns;
          a.end_ns = r.end_ns;
          a.flops = r.flops;
          a.bytes = r.bytes;
          trace.activities.push_back(a);
        }
      });
      buffer->clear();
    }
    trace.flows = std::move(flows_);
    flows_.clear();
  }

  if (device_) {
    trace.metadata.extra[kDeviceTracerKey] = device_->name();
    if (!device_error_.empty()) trace.metadata.extra[kDeviceTracerErrorKey] = device_error_;
    device_->collect_into(trace);
    trace.metadata.extra[kDroppedRecordsKey] = std::to_string(device_->dropped_records());
  }
  sort_by_start(trace);
  return trace;
}

size_t Tracer::record_count() const {
  std::lock_guard lock(mutex_);
  size_t total = 0;
  for (const auto& buffer : buffers_) total += buffer->published.load(std::memory_order_acquire);
  return total + flows_.size();
}

}  // namespace tunescope::profiler
