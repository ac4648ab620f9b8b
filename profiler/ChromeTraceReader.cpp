// Chrome trace-event JSON reader. Events are converted while parsing and dropped from
// the DOM right away, so memory follows the Trace, not the size of the JSON.
#include "profiler/ChromeTraceReader.h"

#include <zlib.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <istream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <streambuf>
#include <string>
#include <unordered_map>

#include "profiler/ChromeTraceWriter.h"

namespace tunescope::profiler {

namespace fs = std::filesystem;
using json = nlohmann::json;
using namespace chrome_trace;

namespace {

// A problem with the content; the caller adds the file name.
class FormatError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A std::streambuf over a gzFile: zlib recognises gzip by its magic bytes and passes
// any other file through unchanged. Read errors end the stream and are kept, so the
// parser's "unexpected end" can be reported as what it really was.
class GzStreamBuf : public std::streambuf {
 public:
  explicit GzStreamBuf(gzFile file) : file_(file) {}

  size_t bytes_read() const { return bytes_read_; }
  bool at_end() const { return at_end_; }
  const std::string& error() const { return error_; }

 protected:
  int_type underflow() override {
    if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
    if (at_end_) return traits_type::eof();
    errno = 0;
    const int n = gzread(file_, buffer_, sizeof buffer_);
    if (n <= 0) {
      at_end_ = true;
      int code = Z_OK;
      const char* message = gzerror(file_, &code);
      if (code == Z_BUF_ERROR)
        error_ = "truncated gzip data";
      else if (code == Z_ERRNO || n < 0)
        error_ = std::string("read error: ") + (errno ? std::strerror(errno) : message);
      else if (code != Z_OK)
        error_ = std::string("corrupt gzip data: ") + message;
      return traits_type::eof();
    }
    bytes_read_ += static_cast<size_t>(n);
    setg(buffer_, buffer_, buffer_ + n);
    return traits_type::to_int_type(*gptr());
  }

 private:
  gzFile file_;
  char buffer_[1 << 16];
  size_t bytes_read_ = 0;
  bool at_end_ = false;
  std::string error_;
};

// `what` names the value in the error message; called only on failure.
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

// Builds the Trace from parser callbacks. Events sit at depth 2 in the object form
// {"traceEvents": [...]} and at depth 1 in the bare array form [...]; both are Chrome
// formats.
class EventCollector {
 public:
  bool on_event(int depth, json::parse_event_t event, json& parsed) {
    using Event = json::parse_event_t;
    if (!in_events_) {
      if (depth == 0 && event == Event::array_start) {
        begin_events(1);
      } else if (depth == 1 && event == Event::key) {
        top_key_ = parsed.get<std::string>();
      } else if (depth == 1 && event == Event::array_start && top_key_ == "traceEvents") {
        begin_events(2);
      }
      return true;
    }
    if (depth == event_depth_ - 1 && event == Event::array_end) {
      in_events_ = false;
      return true;
    }
    if (depth != event_depth_) return true;
    if (event == Event::object_end) {
      convert(parsed);
      ++index_;
      return false;  // converted: drop it from the DOM
    }
    if (event == Event::value || event == Event::array_end)
      throw FormatError("event " + std::to_string(index_) + ": not an object");
    return true;
  }

  bool saw_events() const { return saw_events_; }

  // Times in the file are relative to the origin kept in otherData, which may come
  // after the events.
  Trace finish(const json& document) {
    const json* other = member(document, "otherData");
    if (!other) other = member(document, "metadata");
    int64_t origin = 0;
    // Kineto writes times relative to baseTimeNanoseconds (PyTorch >= 2.0); older
    // Kineto and the legacy profiler write them absolute or relative to their start.
    if (const json* base = member(document, "baseTimeNanoseconds"))
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
      describe_pytorch_trace(document);
    }
    for (Activity& a : trace_.activities) {
      a.start_ns += origin;
      a.end_ns += origin;
    }
    for (Range& r : trace_.ranges) {
      r.start_ns += origin;
      r.end_ns += origin;
    }
    sort_by_start(trace_);
    return std::move(trace_);
  }

 private:
  void begin_events(int depth) {
    in_events_ = true;
    saw_events_ = true;
    event_depth_ = depth;
  }

  std::string where(const char* key) const {
    return "event " + std::to_string(index_) + ": '" + key + "'";
  }

  const json& required(const json& e, const char* key) const {
    const json* value = member(e, key);
    if (!value) throw FormatError(where(key) + " is missing");
    return *value;
  }

  std::string string_of(const json& e, const char* key) const {
    const json& value = required(e, key);
    if (!value.is_string()) throw FormatError(where(key) + " is not a string");
    return value.get<std::string>();
  }

  int64_t integer_of(const json& value, const char* key) const {
    return integer(value, [&] { return where(key); });
  }

  // An int from args when present (the writer's exact value), else from the event
  // itself (pid/tid of foreign traces).
  int64_t arg_or_field(const json& e, const json* args, const char* arg, const char* field) const {
    if (args)
      if (const json* value = member(*args, arg)) return integer_of(*value, arg);
    return integer_of(required(e, field), field);
  }

  double number_or_zero(const json* args, const char* key) const {
    const json* value = args ? member(*args, key) : nullptr;
    if (!value || value->is_null()) return 0;
    if (!value->is_number()) throw FormatError(where(key) + " is not a number");
    return value->get<double>();
  }

  // Microseconds as doubles to integer nanoseconds.
  int64_t nanoseconds(const json& e, const char* key) const {
    const json& value = required(e, key);
    if (!value.is_number()) throw FormatError(where(key) + " is not a number");
    const double ns = value.get<double>() * 1e3;
    if (!std::isfinite(ns) || std::fabs(ns) > 9e18)
      throw FormatError(where(key) + " is out of range");
    return std::llround(ns);
  }

  static std::string text_of(const json& object, const char* key) {
    const json* value = member(object, key);
    if (!value) return {};
    return value->is_string() ? value->get<std::string>() : value->dump();
  }

  void convert(const json& e) {
    const json* ph = member(e, "ph");
    if (!ph || !ph->is_string() || ph->get_ref<const std::string&>() != "X") return;
    const json* cat = member(e, "cat");
    const json* args = member(e, "args");
    if (args && !args->is_object()) args = nullptr;

    if (!cat) {
      convert_legacy_pytorch(e);
      return;
    }
    if (!cat->is_string()) return;
    const Category& known = category_of(cat->get_ref<const std::string&>());
    if (known.pytorch) ++pytorch_events_;
    if (known.kind) {
      Activity a;
      a.kind = *known.kind;
      a.name = string_of(e, "name");
      a.device = static_cast<int>(arg_or_field(e, args, "device", "pid"));
      a.stream = static_cast<int>(arg_or_field(e, args, "stream", "tid"));
      a.start_ns = nanoseconds(e, "ts");
      a.end_ns = a.start_ns + nanoseconds(e, "dur");
      if (const json* correlation = args ? member(*args, "correlation") : nullptr)
        a.correlation = static_cast<uint64_t>(integer_of(*correlation, "correlation"));
      a.flops = number_or_zero(args, "flops");
      a.bytes = number_or_zero(args, "bytes");
      trace_.activities.push_back(std::move(a));
    } else if (known.range) {
      Range r;
      r.name = string_of(e, "name");
      r.category = *known.range;
      if (known.pytorch) {
        // Kineto annotations: ours carry our category, device and lane in args; those
        // of PyTorch are named by what they are, on OS threads mapped to dense lanes.
        if (const json* category = args ? member(*args, "category") : nullptr)
          r.category = range_category_arg(*category);
        else
          r.category = pytorch_range_category(cat->get_ref<const std::string&>(), r.name);
        const json* device = args ? member(*args, "device") : nullptr;
        r.device = device ? static_cast<int>(integer_of(*device, "device")) : 0;
        const json* lane = args ? member(*args, "lane") : nullptr;
        r.lane = lane ? static_cast<int>(integer_of(*lane, "lane")) : dense_lane(e);
      } else {
        r.device = static_cast<int>(arg_or_field(e, args, "device", "pid"));
        if (const json* lane = args ? member(*args, "lane") : nullptr) {
          r.lane = static_cast<int>(integer_of(*lane, "lane"));
        } else {
          // A foreign file: its tid is the lane, unless it follows our range tid scheme.
          const int64_t tid = integer_of(required(e, "tid"), "tid") % kTrackStride;
          r.lane = static_cast<int>(tid >= kRangeTidBase ? tid - kRangeTidBase : tid);
        }
      }
      r.start_ns = nanoseconds(e, "ts");
      r.end_ns = r.start_ns + nanoseconds(e, "dur");
      trace_.ranges.push_back(std::move(r));
    }
  }

  // Our category in a Kineto annotation's args; a bad one is a format error of the file.
  RangeCategory range_category_arg(const json& value) const {
    try {
      if (value.is_string()) return parse_range_category(value.get<std::string>());
    } catch (const std::invalid_argument&) {
    }
    throw FormatError(where("category") + " is not a range category: " + value.dump());
  }

  // The legacy (pre-Kineto) profiler of PyTorch 1.x, still what a build without Kineto
  // writes: a bare list of events without cat; CPU ops in pid "CPU functions", kernels
  // in pid "CUDA functions" with the device as tid (torch/autograd/profiler_util.py).
  void convert_legacy_pytorch(const json& e) {
    const json* pid = member(e, "pid");
    if (!pid || !pid->is_string()) return;
    const std::string& process = pid->get_ref<const std::string&>();
    if (process == "CPU functions") {
      ++pytorch_events_;
      Range r;
      r.name = string_of(e, "name");
      r.category = pytorch_range_category("", r.name);
      r.lane = dense_lane(e);
      r.start_ns = nanoseconds(e, "ts");
      r.end_ns = r.start_ns + nanoseconds(e, "dur");
      trace_.ranges.push_back(std::move(r));
    } else if (process == "CUDA functions") {
      ++pytorch_events_;
      Activity a;
      a.name = string_of(e, "name");
      a.device = static_cast<int>(integer_of(required(e, "tid"), "tid"));
      a.start_ns = nanoseconds(e, "ts");
      a.end_ns = a.start_ns + nanoseconds(e, "dur");
      trace_.activities.push_back(std::move(a));
    }
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
  int dense_lane(const json& e) {
    const json* pid = member(e, "pid");
    const json* tid = member(e, "tid");
    const std::string key = (pid ? pid->dump() : "") + "/" + (tid ? tid->dump() : "");
    return lanes_.emplace(key, static_cast<int>(lanes_.size())).first->second;
  }

  // Without our otherData: say where the trace came from, and what ran it as far as
  // deviceProperties tell.
  void describe_pytorch_trace(const json& document) {
    const bool kineto = member(document, "schemaVersion") != nullptr;
    trace_.metadata.extra["source"] = kineto ? "pytorch-profiler (kineto)" : "pytorch-profiler (legacy)";
    const json* devices = member(document, "deviceProperties");
    const bool has_gpu = (devices && devices->is_array() && !devices->empty()) ||
                         !trace_.activities.empty();
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
    bool pytorch = false;  // a Kineto category (libkineto/src/ActivityType.cpp)
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
      if (text == "cpu_op" || text == "user_annotation" || text == "gpu_user_annotation")
        category = {std::nullopt, RangeCategory::phase, true};
      it = categories_.emplace(text, category).first;
    }
    return it->second;
  }

  std::unordered_map<std::string, Category> categories_;
  std::unordered_map<std::string, int> lanes_;  // dense lanes of PyTorch threads
  size_t pytorch_events_ = 0;
  Trace trace_;
  std::string top_key_;
  bool in_events_ = false;
  bool saw_events_ = false;
  int event_depth_ = 0;
  size_t index_ = 0;
};

}  // namespace

Trace read_chrome_trace(const fs::path& path) {
  const auto error = [&](const std::string& problem) {
    return std::runtime_error(path.string() + ": " + problem);
  };
  std::error_code ec;
  if (fs::is_directory(path, ec)) throw error("cannot read trace: is a directory");
  errno = 0;
  std::unique_ptr<gzFile_s, int (*)(gzFile)> file(gzopen(path.c_str(), "rb"), &gzclose);
  if (!file)
    throw error(std::string("cannot open: ") + (errno ? std::strerror(errno) : "unknown error"));
  gzbuffer(file.get(), 1 << 17);

  GzStreamBuf buffer(file.get());
  std::istream in(&buffer);
  EventCollector collector;
  json document;
  try {
    document = json::parse(in, [&](int depth, json::parse_event_t event, json& parsed) {
      return collector.on_event(depth, event, parsed);
    });
  } catch (const json::parse_error& e) {
    if (!buffer.error().empty()) throw error(buffer.error());
    if (buffer.bytes_read() == 0) throw error("not JSON: empty file");
    if (buffer.at_end() && e.byte >= buffer.bytes_read())
      throw error("truncated JSON: input ends at byte " + std::to_string(buffer.bytes_read()));
    throw error(std::string("not JSON: ") + e.what());
  } catch (const FormatError& e) {
    throw error(e.what());
  } catch (const json::exception& e) {
    throw error(e.what());
  }
  if (!buffer.error().empty()) throw error(buffer.error());
  if (!collector.saw_events()) throw error("not a Chrome trace: no traceEvents array");
  try {
    return collector.finish(document);
  } catch (const FormatError& e) {
    throw error(e.what());
  }
}

}  // namespace tunescope::profiler
