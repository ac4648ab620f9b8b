// The real CUPTI behind the CuptiApi interface (see CuptiApi.h).
#ifdef HAS_CUPTI

#include "profiler/cupti/CuptiApi.h"

#include <cstdio>

namespace tunescope::profiler::cupti {

namespace {

#define TS_CUPTI_CALL(call) cupti_call((call), #call, log_)

class RealCuptiApi final : public CuptiApi {
 public:
  explicit RealCuptiApi(CuptiLog log) : log_(std::move(log)) {}

  CUptiResult enable(CUpti_ActivityKind kind) override {
    return TS_CUPTI_CALL(cuptiActivityEnable(kind));
  }
  CUptiResult disable(CUpti_ActivityKind kind) override {
    return TS_CUPTI_CALL(cuptiActivityDisable(kind));
  }
  CUptiResult register_callbacks(CUpti_BuffersCallbackRequestFunc requested,
                                 CUpti_BuffersCallbackCompleteFunc completed) override {
    return TS_CUPTI_CALL(cuptiActivityRegisterCallbacks(requested, completed));
  }
  CUptiResult next_record(uint8_t* buffer, size_t valid_bytes, CUpti_Activity** record) override {
    // The end of a buffer is how iteration stops, not a failure worth a log line.
    const CUptiResult status = cuptiActivityGetNextRecord(buffer, valid_bytes, record);
    if (status == CUPTI_ERROR_MAX_LIMIT_REACHED) return status;
    return cupti_call(status, "cuptiActivityGetNextRecord(buffer, valid_bytes, record)", log_);
  }
  CUptiResult dropped_records(CUcontext context, uint32_t stream, size_t* dropped) override {
    return TS_CUPTI_CALL(cuptiActivityGetNumDroppedRecords(context, stream, dropped));
  }
  CUptiResult flush_all(uint32_t flags) override {
    return TS_CUPTI_CALL(cuptiActivityFlushAll(flags));
  }
  CUptiResult push_external_correlation(uint64_t id) override {
    return TS_CUPTI_CALL(
        cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, id));
  }
  CUptiResult pop_external_correlation() override {
    return TS_CUPTI_CALL(
        cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, nullptr));
  }
  CUptiResult timestamp(uint64_t* ns) override { return TS_CUPTI_CALL(cuptiGetTimestamp(ns)); }
  std::string callback_name(CUpti_CallbackDomain domain, CUpti_CallbackId id) override {
    const char* name = nullptr;
    if (TS_CUPTI_CALL(cuptiGetCallbackName(domain, id, &name)) != CUPTI_SUCCESS || !name) return {};
    return name;
  }

 private:
  CuptiLog log_;
};

#undef TS_CUPTI_CALL

}  // namespace

std::string result_string(CUptiResult status) {
  const char* text = nullptr;
  if (cuptiGetResultString(status, &text) == CUPTI_SUCCESS && text) return text;
  return "CUPTI result " + std::to_string(static_cast<int>(status));
}

CUptiResult cupti_call(CUptiResult status, const char* call, const CuptiLog& log) {
  if (status != CUPTI_SUCCESS && log)
    log(std::string("CUPTI ") + call + " failed: " + result_string(status));
  return status;
}

std::unique_ptr<CuptiApi> make_cupti_api(CuptiLog log) {
  if (!log)
    log = [](const std::string& line) { std::fprintf(stderr, "tunescope: %s\n", line.c_str()); };
  return std::make_unique<RealCuptiApi>(std::move(log));
}

}  // namespace tunescope::profiler::cupti

#endif  // HAS_CUPTI
