#include "profiler/Nvtx.h"

#ifdef TUNESCOPE_HAVE_NVTX
#include <nvtx3/nvToolsExt.h>

#include <string>
#endif

namespace tunescope::profiler::nvtx {

#ifdef TUNESCOPE_HAVE_NVTX

namespace {

constexpr RangeCategory kCategories[] = {RangeCategory::run, RangeCategory::candidate,
                                         RangeCategory::iteration, RangeCategory::layer,
                                         RangeCategory::phase};

// NVTX categories are user numbers with 0 meaning "none".
uint32_t category_id(RangeCategory category) { return 1 + static_cast<uint32_t>(category); }

nvtxDomainHandle_t domain() {
  static const nvtxDomainHandle_t handle = [] {
    nvtxDomainHandle_t created = nvtxDomainCreateA("tunescope");
    for (RangeCategory category : kCategories)
      nvtxDomainNameCategoryA(created, category_id(category), to_string(category).c_str());
    return created;
  }();
  return handle;
}

}  // namespace

void push_range(const char* name, RangeCategory category) {
  nvtxEventAttributes_t attributes{};
  attributes.version = NVTX_VERSION;
  attributes.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  attributes.category = category_id(category);
  attributes.messageType = NVTX_MESSAGE_TYPE_ASCII;
  attributes.message.ascii = name ? name : "";
  nvtxDomainRangePushEx(domain(), &attributes);
}

void pop_range() { nvtxDomainRangePop(domain()); }

#else

void push_range(const char*, RangeCategory) {}
void pop_range() {}

#endif

}  // namespace tunescope::profiler::nvtx
