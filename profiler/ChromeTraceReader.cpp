// Chrome trace-event JSON reader. The file is streamed through JsonScanner: each event
// is read into a flat set of the fields we use and converted at once, so memory
// follows the Trace, not the size of the JSON; only the small top-level metadata
// values (otherData, deviceProperties...) are parsed into nlohmann::json.
#include "profiler/ChromeTraceReader.h"

#include <sys/resource.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <new>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>

#include "profiler/ChromeEventOutput.h"
#include "profiler/ChromeTraceWriter.h"
#include "profiler/JsonScanner.h"
#include "profiler/ReadAhead.h"

namespace tunescope::profiler {

namespace fs = std::filesystem;
using json = nlohmann::json;
using Type = JsonScalar::Type;
using namespace chrome_trace;

namespace {

// A problem with the content; the caller adds the file name.
class FormatError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Top-level values kept for the metadata; anything bigger is not a trace's metadata.
constexpr size_t kMaxMetadataBytes = size_t{16} << 20;
constexpr const char* kMetadataKeys[] = {"otherData", "metadata", "baseTimeNanoseconds",
                                         "schemaVersion", "deviceProperties"};

std::string byte_size(uint64_t bytes) {
  return bytes >= (uint64_t{1} << 20) ? std::to_string(bytes >> 20) + " MiB"
                                      : std::to_string(bytes) + " bytes";
}

// `what` names the value in the error message; called only on failure.
template <typename What>
int64_t integer(const JsonScalar& value, What what) {
  if (value.type == Type::integer) return value.integer;
  if (value.type == Type::number) {
    const double d = value.number;
    if (std::nearbyint(d) == d && std::fabs(d) < 9.2e18) return static_cast<int64_t>(d);
  }
  throw FormatError(what() + " is not an integer");
}

template <typename What>
int64_t integer(const json& value, What what) {
  if (value.is_number_integer()) return value.get<int64_t>();
  if (value.is_number_float()) {
    const double d = value.get<double>();
    if (std::nearbyint(d) == d && std::fabs(d) < 9.2e18) return static_cast<int64_t>(d);
  }
  throw FormatError(what() + " is not an integer");
}

const json* member(const json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  const auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

// The fields of one event (and of its args) that conversion looks at.
struct EventFields {
  JsonScalar ph, cat, name, pid, tid, ts, dur, id;
  bool has_args = false;
  JsonScalar device, stream, correlation, flops, bytes, lane, category, range_id, rank;

  void clear() {
    for (JsonScalar* f : {&ph, &cat, &name, &pid, &tid, &ts, &dur, &id}) f->clear();
    clear_args();
  }
  void clear_args() {
    has_args = false;
    for (JsonScalar* f :
         {&device, &stream, &correlation, &flops, &bytes, &lane, &category, &range_id, &rank})
      f->clear();
  }
  JsonScalar* field(std::string_view key) {
    switch (key.size()) {
      case 2:
        if (key == "ph") return &ph;
        if (key == "ts") return &ts;
        if (key == "id") return &id;
        return nullptr;
      case 3:
        if (key == "cat") return &cat;
        if (key == "pid") return &pid;
        if (key == "tid") return &tid;
        if (key == "dur") return &dur;
        return nullptr;
      case 4: return key == "name" ? &name : nullptr;
      default: return nullptr;
    }
  }
  JsonScalar* arg(std::string_view key) {
    switch (key.size()) {
      case 4:
        if (key == "lane") return &lane;
        if (key == "rank") return &rank;
        return nullptr;
      case 5:
        if (key == "flops") return &flops;
        if (key == "bytes") return &bytes;
        return nullptr;
      case 6:
        if (key == "device") return &device;
        if (key == "stream") return &stream;
        return nullptr;
      case 8:
        if (key == "category") return &category;
        if (key == "range_id") return &range_id;
        return nullptr;
      case 11: return key == "correlation" ? &correlation : nullptr;
      default: return nullptr;
    }
  }
};

// Reads the events one by one off the scanner and builds the Trace. Events sit in the
// "traceEvents" array of the object form or are the bare top-level array; both are
// Chrome formats.
class EventCollector {
 public:
  // `input_done` follows the bytes of the file read so far (compressed bytes for gzip),
  // of `input_total`: what the record count is estimated from.
  EventCollector(JsonScanner& in, size_t max_records, uint64_t max_memory,
                 const uint64_t& input_done, uint64_t input_total)
      : in_(in),
        max_records_(max_records),
        max_memory_(max_memory),
        input_done_(input_done),
        input_total_(input_total) {}

  void read_document() {
    const int c = in_.peek();
    if (c == '[') {
      read_events();
    } else if (c == '{') {
      read_top_object();
    } else {
      in_.skip_value();
    }
    in_.expect_end();
  }

  bool saw_events() const { return saw_events_; }
  size_t records() const { return trace_.activities.size() + trace_.ranges.size(); }

  // Times in the file are relative to the origin kept in otherData, which may come
  // after the events.
  Trace finish() {
    const json* other = member(document_, "otherData");
    if (!other) other = member(document_, "metadata");
    int64_t origin = 0;
    // Kineto writes times relative to baseTimeNanoseconds (PyTorch >= 2.0); older
    // Kineto and the legacy profiler write them absolute or relative to their start.
    if (const json* base = member(document_, "baseTimeNanoseconds"))
      origin = integer(*base, [] { return std::string("'baseTimeNanoseconds'"); });
    if (other) {
      trace_.metadata.machine = text_of(*other, kMachineKey);
      trace_.metadata.backend = text_of(*other, kBackendKey);
      trace_.metadata.config = text_of(*other, kConfigKey);
      if (const json* extra = member(*other, kExtraKey); extra && extra->is_object())
        for (const auto& [key, value] : extra->items())
          trace_.metadata.extra[key] = value.is_string() ? value.get<std::string>() : value.dump();
      if (const json* value = member(*other, kTimeOriginKey))
        origin = integer(*value, [] { return std::string("otherData '") + kTimeOriginKey + "'"; });
    } else if (pytorch_events_ > 0) {
      describe_pytorch_trace();
      if (std::none_of(trace_.activities.begin(), trace_.activities.end(),
                       [](const Activity& a) { return a.kind == ActivityKind::kernel; }))
        add_work_ops_as_activities();
    }
    for (Activity& a : trace_.activities) {
      a.start_ns += origin;
      a.end_ns += origin;
    }
    for (Range& r : trace_.ranges) {
      r.start_ns += origin;
      r.end_ns += origin;
    }
    for (auto& [id, flow] : flows_) {
      if (!flow.from || !flow.to) continue;  // half a flow (a cut-off file) is dropped
      trace_.flows.push_back(Flow{flow.kind, *flow.from, *flow.to});
      trace_.flows.back().from.ns += origin;
      trace_.flows.back().to.ns += origin;
    }
    sort_by_start(trace_);
    return std::move(trace_);
  }

 private:
  void read_top_object() {
    in_.expect('{', "'{'");
    if (in_.consume_if('}')) return;
    std::string key;
    for (;;) {
      in_.read_string(key);
      in_.expect(':', "':'");
      if (key == "traceEvents" && in_.peek() == '[') {
        read_events();
      } else if (is_metadata_key(key)) {
        std::string raw;
        in_.capture_value(raw, kMaxMetadataBytes, ("'" + key + "'").c_str());
        document_[key] = json::parse(raw);
      } else {
        in_.skip_value();
      }
      if (in_.consume_if(',')) continue;
      in_.expect('}', "',' or '}'");
      return;
    }
  }

  static bool is_metadata_key(const std::string& key) {
    for (const char* known : kMetadataKeys)
      if (key == known) return true;
    return false;
  }

  void read_events() {
    saw_events_ = true;
    in_.expect('[', "'['");
    if (in_.consume_if(']')) return;
    for (;;) {
      const int c = in_.peek();
      event_offset_ = in_.offset();
      if (c != '{') {
        if (c == '"' || c == '-' || (c >= '0' && c <= '9') || c == 't' || c == 'f' || c == 'n' ||
            c == '[')
          throw FormatError("event " + std::to_string(index_) + ": not an object" + at_event());
        in_.fail_unexpected("an event object");
      }
      read_event();
      convert();
      ++index_;
      if (in_.consume_if(',')) continue;
      in_.expect(']', "',' or ']' after an event");
      return;
    }
  }

  void read_event() {
    e_.clear();
    in_.expect('{', "'{'");
    if (in_.consume_if('}')) return;
    for (;;) {
      in_.read_string(key_);
      in_.expect(':', "':'");
      if (key_.size() == 4 && key_ == "args") {
        e_.clear_args();
        if (in_.peek() == '{')
          read_args();
        else
          in_.skip_value();
      } else if (JsonScalar* field = e_.field(key_)) {
        in_.read_scalar(*field);
      } else {
        in_.skip_value();
      }
      if (in_.consume_if(',')) continue;
      in_.expect('}', "',' or '}' in an event");
      return;
    }
  }

  void read_args() {
    e_.has_args = true;
    in_.expect('{', "'{'");
    if (in_.consume_if('}')) return;
    for (;;) {
      in_.read_string(key_);
      in_.expect(':', "':'");
      if (JsonScalar* arg = e_.arg(key_))
        in_.read_scalar(*arg);
      else
        in_.skip_value();
      if (in_.consume_if(',')) continue;
      in_.expect('}', "',' or '}' in args");
      return;
    }
  }

  std::string at_event() const {
    return " (the event starts at byte " + std::to_string(event_offset_) + ")";
  }

  [[noreturn]] void fail(const char* key, const char* problem) const {
    throw FormatError("event " + std::to_string(index_) + ": '" + key + "' " + problem +
                      at_event());
  }

  const JsonScalar& required(const JsonScalar& value, const char* key) const {
    if (!value.present()) fail(key, "is missing");
    return value;
  }

  std::string string_of(JsonScalar& value, const char* key) const {
    if (required(value, key).type != Type::string) fail(key, "is not a string");
    return std::move(value.text);
  }

  int64_t integer_of(const JsonScalar& value, const char* key) const {
    return integer(value, [&] { return "event " + std::to_string(index_) + ": '" + key + "'"; });
  }

  // An int from args when present (the writer's exact value), else from the event
  // itself (pid/tid of foreign traces).
  int64_t arg_or_field(const JsonScalar& arg, const JsonScalar& field, const char* arg_name,
                       const char* field_name) const {
    if (e_.has_args && arg.present()) return integer_of(arg, arg_name);
    return integer_of(required(field, field_name), field_name);
  }

  const JsonScalar* arg(const JsonScalar& value) const {
    return e_.has_args && value.present() ? &value : nullptr;
  }

  double number_or_zero(const JsonScalar& value, const char* key) const {
    if (!arg(value) || value.type == Type::null) return 0;
    if (!value.is_number()) fail(key, "is not a number");
    return value.as_double();
  }

  // The rank a merged trace writes in args (Activity::rank); 0 when absent or not a
  // number (a foreign event's own "rank" argument).
  int rank_arg() const {
    if (!arg(e_.rank) || !e_.rank.is_number()) return 0;
    const int64_t rank = integer_of(e_.rank, "rank");
    if (rank < 0 || rank > INT32_MAX) fail("rank", "is out of range");
    return static_cast<int>(rank);
  }

  // Microseconds as doubles to integer nanoseconds.
  int64_t nanoseconds(const JsonScalar& value, const char* key) const {
    if (!required(value, key).is_number()) fail(key, "is not a number");
    const double ns = value.as_double() * 1e3;
    if (!std::isfinite(ns) || std::fabs(ns) > 9e18) fail(key, "is out of range");
    return std::llround(ns);
  }

  static std::string text_of(const json& object, const char* key) {
    const json* value = member(object, key);
    if (!value) return {};
    return value->is_string() ? value->get<std::string>() : value->dump();
  }

  // Our dependency flows ("s" and "f" events of category kDependencyCategory, paired by
  // id); the lane of each end from args, else from pid/tid in our layout.
  void convert_dependency() {
    if (e_.cat.type != Type::string || e_.cat.text != kDependencyCategory) return;
    const int64_t id = integer_of(required(e_.id, "id"), "id");
    FlowEnd end;
    end.device = static_cast<int>(e_.has_args && e_.device.present()
                                      ? integer_of(e_.device, "device")
                                      : integer_of(required(e_.pid, "pid"), "pid") - 1);
    end.stream =
        static_cast<int>(e_.has_args && e_.stream.present()
                             ? integer_of(e_.stream, "stream")
                             : integer_of(required(e_.tid, "tid"), "tid") % kTrackStride - 1);
    end.ns = nanoseconds(e_.ts, "ts");
    end.rank = rank_arg();
    PendingFlow& flow = flows_[id];
    if (e_.ph.text == "s") {
      try {
        flow.kind = parse_flow_kind(string_of(e_.name, "name"));
      } catch (const std::invalid_argument&) {
        fail("name", "is not a flow kind (event, host, launch)");
      }
      flow.from = end;
    } else {
      flow.to = end;
    }
  }

  void convert() {
    if (e_.ph.type == Type::string && (e_.ph.text == "s" || e_.ph.text == "f")) {
      convert_dependency();
      return;
    }
    if (e_.ph.type != Type::string || e_.ph.text != "X") return;
    if (!e_.cat.present()) {
      convert_legacy_pytorch();
      return;
    }
    if (e_.cat.type != Type::string) return;
    const Category& known = category_of(e_.cat.text);
    if (known.pytorch) ++pytorch_events_;
    if (known.kind) {
      Activity a;
      a.kind = *known.kind;
      a.name = string_of(e_.name, "name");
      if (known.host_thread) {
        // A CUDA API call of a PyTorch thread: on the host (device -1, as CUPTI's
        // converter puts API calls), on the thread's lane; its correlation links it to
        // what it launched.
        a.device = -1;
        a.stream = dense_lane();
      } else {
        a.device = static_cast<int>(arg_or_field(e_.device, e_.pid, "device", "pid"));
        a.stream = static_cast<int>(arg_or_field(e_.stream, e_.tid, "stream", "tid"));
      }
      a.start_ns = nanoseconds(e_.ts, "ts");
      a.end_ns = a.start_ns + nanoseconds(e_.dur, "dur");
      if (arg(e_.correlation))
        a.correlation = static_cast<uint64_t>(integer_of(e_.correlation, "correlation"));
      if (arg(e_.range_id)) a.range_id = static_cast<uint64_t>(integer_of(e_.range_id, "range_id"));
      a.flops = number_or_zero(e_.flops, "flops");
      a.bytes = number_or_zero(e_.bytes, "bytes");
      a.rank = rank_arg();
      keep(a);
    } else if (known.range) {
      Range r;
      r.name = string_of(e_.name, "name");
      r.category = *known.range;
      if (known.pytorch) {
        // Kineto annotations: ours carry our category, device and lane in args; those
        // of PyTorch are named by what they are, on OS threads mapped to dense lanes.
        if (arg(e_.category))
          r.category = range_category_arg(e_.category);
        else
          r.category = pytorch_range_category(e_.cat.text, r.name);
        r.device = arg(e_.device) ? static_cast<int>(integer_of(e_.device, "device")) : 0;
        r.lane = arg(e_.lane) ? static_cast<int>(integer_of(e_.lane, "lane")) : dense_lane();
      } else {
        r.device = static_cast<int>(arg_or_field(e_.device, e_.pid, "device", "pid"));
        if (arg(e_.lane)) {
          r.lane = static_cast<int>(integer_of(e_.lane, "lane"));
        } else {
          // A foreign file: its tid is the lane, unless it follows our range tid scheme.
          const int64_t tid = integer_of(required(e_.tid, "tid"), "tid") % kTrackStride;
          r.lane = static_cast<int>(tid >= kRangeTidBase ? tid - kRangeTidBase : tid);
        }
      }
      if (arg(e_.range_id)) r.id = static_cast<uint64_t>(integer_of(e_.range_id, "range_id"));
      r.rank = rank_arg();
      r.start_ns = nanoseconds(e_.ts, "ts");
      r.end_ns = r.start_ns + nanoseconds(e_.dur, "dur");
      keep(r);
    }
  }

  // Our category in a Kineto annotation's args; a bad one is a format error of the file.
  RangeCategory range_category_arg(const JsonScalar& value) const {
    try {
      if (value.type == Type::string) return parse_range_category(value.text);
    } catch (const std::invalid_argument&) {
    }
    const std::string shown = value.type == Type::string ? "\"" + value.text + "\""
                              : value.is_number()        ? value.text
                                                  : std::string("a value that is not a string");
    fail("category", ("is not a range category: " + shown).c_str());
  }

  // The legacy (pre-Kineto) profiler of PyTorch 1.x, still what a build without Kineto
  // writes: a bare list of events without cat; CPU ops in pid "CPU functions", kernels
  // in pid "CUDA functions" with the device as tid (torch/autograd/profiler_util.py).
  void convert_legacy_pytorch() {
    if (e_.pid.type != Type::string) return;
    if (e_.pid.text == "CPU functions") {
      ++pytorch_events_;
      Range r;
      r.name = string_of(e_.name, "name");
      r.category = pytorch_range_category("", r.name);
      r.lane = dense_lane();
      r.start_ns = nanoseconds(e_.ts, "ts");
      r.end_ns = r.start_ns + nanoseconds(e_.dur, "dur");
      keep(r);
    } else if (e_.pid.text == "CUDA functions") {
      ++pytorch_events_;
      Activity a;
      a.name = string_of(e_.name, "name");
      a.device = static_cast<int>(integer_of(required(e_.tid, "tid"), "tid"));
      a.start_ns = nanoseconds(e_.ts, "ts");
      a.end_ns = a.start_ns + nanoseconds(e_.dur, "dur");
      keep(a);
    }
  }

  // Keeps a record if the limits allow it. A vector that must grow doubles, so then its
  // new capacity counts; while it has room, the records it holds (room reserved and not
  // yet used is not resident). Names are interned (Name): the distinct names this read
  // added count.
  void keep(const Activity& a) {
    reserve_from_estimate();
    check_limits(grown(trace_.activities), trace_.ranges.size());
    trace_.activities.push_back(a);
  }
  void keep(const Range& r) {
    reserve_from_estimate();
    check_limits(trace_.activities.size(), grown(trace_.ranges));
    trace_.ranges.push_back(r);
  }

  template <typename List>
  static size_t grown(const List& list) {
    return list.size() < list.capacity() ? list.size() + 1
                                         : std::max<size_t>(16, list.capacity() * 2);
  }

  // Doubling a vector of millions of records holds the old and the new buffer at once
  // (1.7x the records at the peak). Once enough of the file is read to know its density,
  // the lists are reserved for the whole file (plus a margin), so they never move again
  // unless the estimate was short. Untouched reserved room costs address space only.
  void reserve_from_estimate() {
    constexpr uint64_t kEstimateAfterBytes = uint64_t{32} << 20;
    if (estimated_ || input_done_ < kEstimateAfterBytes) return;
    estimated_ = true;
    if (input_total_ <= input_done_) return;
    const double scale = 1.1 * static_cast<double>(input_total_) / static_cast<double>(input_done_);
    const auto estimate = [&](size_t count) {
      double n = static_cast<double>(count) * scale + 1024;
      if (max_records_ != 0) n = std::min(n, static_cast<double>(max_records_) + 1);
      return static_cast<size_t>(n);
    };
    const size_t activities = estimate(trace_.activities.size());
    const size_t ranges = estimate(trace_.ranges.size());
    if (static_cast<double>(activities) * sizeof(Activity) +
            static_cast<double>(ranges) * sizeof(Range) >
        static_cast<double>(max_memory_))
      return;  // the limit will stop this read: doubling up to it is the old behaviour
    try {
      trace_.activities.reserve(activities);
      trace_.ranges.reserve(ranges);
    } catch (const std::bad_alloc&) {
      // Not that much address space (ulimit -v): grow as needed instead.
    }
  }

  void check_limits(size_t activity_slots, size_t range_slots) {
    if (max_records_ != 0 && records() >= max_records_)
      throw FormatError("too many events: more than " + std::to_string(max_records_) +
                        " activities and ranges, the limit (event " + std::to_string(index_) +
                        at_event() + ")");
    const uint64_t needed = (Name::interned_bytes() - interned_at_start_) +
                            activity_slots * sizeof(Activity) + range_slots * sizeof(Range);
    if (needed > max_memory_)
      throw FormatError("too large: its records would need more than " + byte_size(max_memory_) +
                        " of memory, the limit for traces (" + std::to_string(records()) +
                        " activities and ranges read, event " + std::to_string(index_) +
                        at_event() + ")");
  }

  // ProfilerStep#N is the profiler's iteration; "aten::..." and other namespaced names
  // are operators (finest level we have: layer); the rest are record_function labels.
  static RangeCategory pytorch_range_category(const std::string& cat, const std::string& name) {
    if (name.rfind("ProfilerStep#", 0) == 0) return RangeCategory::iteration;
    if (cat == "cpu_op" || name.find("::") != std::string::npos) return RangeCategory::layer;
    return RangeCategory::phase;
  }

  // PyTorch's pids and tids are OS ids (or names): lanes are numbered by first
  // appearance of each (pid, tid).
  int dense_lane() {
    const auto text = [](const JsonScalar& v) {
      return v.present() ? std::to_string(static_cast<int>(v.type)) + ":" + v.text : std::string();
    };
    const std::string key = text(e_.pid) + '\x1f' + text(e_.tid);
    return lanes_.emplace(key, static_cast<int>(lanes_.size())).first->second;
  }

  // A PyTorch run without device kernels (a CPU-only machine) did its work in its
  // operators: the innermost ones that do most of their own work become the
  // activities, on their thread's lane, so the kernel table and the utilisation say
  // where the time went. That is a leaf op, or one whose self time is at least the time
  // of the ops it calls (a convolution that only allocates its output through
  // aten::empty); what such an op calls stays inside it. Ops are the layer-category
  // ranges (cpu_op, or namespaced names in the legacy form).
  void add_work_ops_as_activities() {
    sort_by_start(trace_);  // enclosing ops first, as the nesting walk needs
    constexpr size_t kNone = SIZE_MAX;
    const size_t n = trace_.ranges.size();
    std::vector<size_t> parent(n, kNone);
    std::vector<int64_t> called_ns(n, 0);  // time in the ops each op calls directly
    std::vector<bool> is_op(n, false);
    std::map<std::pair<int, int>, std::vector<size_t>> open;  // enclosing ops, per lane
    for (size_t i = 0; i < n; ++i) {
      const Range& r = trace_.ranges[i];
      if (r.category != RangeCategory::layer) continue;
      is_op[i] = true;
      // Sorted by start: r is a child of the innermost open op it starts inside. Times
      // are rounded (to 1 us in the legacy form), so a child may end after its parent
      // or be an empty op at its parent's end; a sibling starts at or after the end.
      const auto starts_inside = [&r](const Range& op) {
        return r.start_ns < op.end_ns || (r.start_ns == op.end_ns && r.end_ns == r.start_ns);
      };
      std::vector<size_t>& stack = open[{r.device, r.lane}];
      while (!stack.empty() && !starts_inside(trace_.ranges[stack.back()])) stack.pop_back();
      if (!stack.empty()) {
        parent[i] = stack.back();
        called_ns[parent[i]] += r.end_ns - r.start_ns;
      }
      stack.push_back(i);
    }
    std::vector<bool> covered(n, false);  // chosen, or inside a chosen op
    for (size_t i = 0; i < n; ++i) {
      if (!is_op[i] || (parent[i] != kNone && covered[parent[i]])) {
        covered[i] = is_op[i];
        continue;
      }
      const Range& r = trace_.ranges[i];
      const int64_t duration = r.end_ns - r.start_ns;
      if (duration - std::min(called_ns[i], duration) < called_ns[i]) continue;
      covered[i] = true;
      Activity a;
      a.name = r.name;
      a.device = r.device;
      a.stream = r.lane;
      a.start_ns = r.start_ns;
      a.end_ns = r.end_ns;
      keep(a);
    }
    if (!trace_.activities.empty())
      trace_.metadata.extra["activities"] =
          "CPU operators doing most of their own work (the trace has no device kernels)";
  }

  // Without our otherData: say where the trace came from, and what ran it as far as
  // deviceProperties tell.
  void describe_pytorch_trace() {
    const bool kineto = member(document_, "schemaVersion") != nullptr;
    trace_.metadata.extra["source"] =
        kineto ? "pytorch-profiler (kineto)" : "pytorch-profiler (legacy)";
    const json* devices = member(document_, "deviceProperties");
    const bool has_gpu =
        (devices && devices->is_array() && !devices->empty()) || !trace_.activities.empty();
    trace_.metadata.backend = has_gpu ? "cuda" : "cpu";
    if (devices && devices->is_array()) {
      std::map<std::string, int> names;
      for (const json& device : *devices)
        if (const json* name = member(device, "name"); name && name->is_string())
          ++names[name->get<std::string>()];
      for (const auto& [name, count] : names)
        trace_.metadata.machine += (trace_.metadata.machine.empty() ? "" : ", ") + name +
                                   (count > 1 ? " x" + std::to_string(count) : "");
    }
  }

  struct Category {
    std::optional<ActivityKind> kind;
    std::optional<RangeCategory> range;
    bool pytorch = false;      // a Kineto category (libkineto/src/ActivityType.cpp)
    bool host_thread = false;  // placed by its OS thread, not by device and stream
  };

  // Trace.h's parsers are the one list of names; their exceptions are paid once per
  // distinct category, not once per event.
  const Category& category_of(const std::string& text) {
    auto it = categories_.find(text);
    if (it == categories_.end()) {
      Category category;
      try {
        category.kind = parse_activity_kind(text);
      } catch (const std::invalid_argument&) {
      }
      try {
        category.range = parse_range_category(text);
      } catch (const std::invalid_argument&) {
      }
      // "kernel" and "overhead" are both ours and Kineto's, with the same meaning.
      if (text == "gpu_memcpy") category = {ActivityKind::memcpy, std::nullopt, true};
      if (text == "gpu_memset") category = {ActivityKind::memset, std::nullopt, true};
      if (text == "cuda_sync") category = {ActivityKind::sync, std::nullopt, true};
      if (text == "cuda_runtime" || text == "cuda_driver")
        category = {ActivityKind::overhead, std::nullopt, true, true};
      if (text == "cpu_op" || text == "user_annotation" || text == "gpu_user_annotation")
        category = {std::nullopt, RangeCategory::phase, true};
      it = categories_.emplace(text, category).first;
    }
    return it->second;
  }

  JsonScanner& in_;
  size_t max_records_;
  uint64_t max_memory_;
  EventFields e_;
  std::string key_;
  json document_ = json::object();  // the top-level metadata values
  std::unordered_map<std::string, Category> categories_;
  std::unordered_map<std::string, int> lanes_;  // dense lanes of PyTorch threads
  struct PendingFlow {
    FlowKind kind = FlowKind::event;
    std::optional<FlowEnd> from, to;
  };
  std::map<int64_t, PendingFlow> flows_;  // dependency flows by id, until both ends are read
  size_t pytorch_events_ = 0;
  const uint64_t interned_at_start_ = Name::interned_bytes();
  const uint64_t& input_done_;
  uint64_t input_total_;
  bool estimated_ = false;
  Trace trace_;
  bool saw_events_ = false;
  size_t index_ = 0;
  uint64_t event_offset_ = 0;
};

// Half of what this process can have: physical memory, or the address-space limit.
uint64_t default_memory_limit() {
  uint64_t limit = UINT64_MAX;
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0) limit = static_cast<uint64_t>(pages) * static_cast<uint64_t>(page);
  rlimit as{};
  if (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY)
    limit = std::min<uint64_t>(limit, as.rlim_cur);
  return limit / 2;
}

std::string gzip_problem(gzFile file, int n) {
  int code = Z_OK;
  const char* message = gzerror(file, &code);
  if (code == Z_BUF_ERROR) return "truncated gzip data";
  if (code == Z_ERRNO || n < 0)
    return std::string("read error: ") + (errno ? std::strerror(errno) : message);
  if (code != Z_OK) return std::string("corrupt gzip data: ") + message;
  return {};
}

}  // namespace

Trace read_chrome_trace(const fs::path& path, const TraceReadOptions& options) {
  const auto error = [&](const std::string& problem) {
    return std::runtime_error(path.string() + ": " + problem);
  };
  std::error_code ec;
  if (fs::is_directory(path, ec)) throw error("cannot read trace: is a directory");
  errno = 0;
  std::unique_ptr<gzFile_s, int (*)(gzFile)> file(gzopen(path.c_str(), "rb"), &gzclose);
  if (!file)
    throw error(std::string("cannot open: ") + (errno ? std::strerror(errno) : "unknown error"));
  gzbuffer(file.get(), 1 << 20);
  const uint64_t file_size = fs::file_size(path, ec);
  uint64_t file_done = 0;

  // zlib recognises gzip by its magic bytes and passes any other file through.
  const auto read_some = [&file](char* buffer, size_t capacity, uint64_t& position) -> size_t {
    errno = 0;
    const int n =
        gzread(file.get(), buffer, static_cast<unsigned>(std::min<size_t>(capacity, INT_MAX)));
    position = static_cast<uint64_t>(std::max<z_off_t>(0, gzoffset(file.get())));
    if (n <= 0) {
      const std::string problem = gzip_problem(file.get(), n);
      if (!problem.empty()) throw FormatError(problem);
    }
    return n > 0 ? static_cast<size_t>(n) : 0;
  };
  // A gzip file inflates on a thread of its own, a few chunks ahead of the parser; a plain
  // one is read in place (a thread would only add a copy).
  std::optional<ReadAhead> ahead;
  if (gzdirect(file.get()) == 0)
    ahead.emplace(
        [&read_some](ReadAhead::Chunk& chunk) {
          chunk.bytes.resize(read_some(chunk.bytes.data(), chunk.bytes.size(), chunk.position));
          return !chunk.bytes.empty();
        },
        4 << 20, 4);
  JsonScanner in([&](char* buffer, size_t capacity) -> size_t {
    if (options.cancel && options.cancel->load(std::memory_order_relaxed))
      throw TraceReadCancelled(path.string() + ": loading cancelled");
    size_t n = 0;
    if (ahead) {
      n = ahead->read(buffer, capacity);
      file_done = ahead->position();
    } else {
      n = read_some(buffer, capacity, file_done);
    }
    if (options.progress) options.progress(file_done, file_size);
    return n;
  });
  const uint64_t memory =
      options.max_memory_bytes ? options.max_memory_bytes : default_memory_limit();
  EventCollector collector(in, options.max_records, memory, file_done, ec ? 0 : file_size);
  try {
    collector.read_document();
    if (!collector.saw_events()) throw FormatError("not a Chrome trace: no traceEvents array");
    Trace trace = collector.finish();
    if (options.cancel && options.cancel->load(std::memory_order_relaxed))
      throw TraceReadCancelled(path.string() + ": loading cancelled");
    return trace;
  } catch (const TraceReadCancelled&) {
    throw;
  } catch (const JsonSyntaxError& e) {
    throw error(e.what());
  } catch (const FormatError& e) {
    throw error(e.what());
  } catch (const json::exception& e) {
    throw error(e.what());
  } catch (const std::bad_alloc&) {
    throw error("out of memory after " + std::to_string(collector.records()) +
                " activities and ranges (byte " + std::to_string(in.offset()) +
                "): the trace is too large for this machine");
  }
}

}  // namespace tunescope::profiler
