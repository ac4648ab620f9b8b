// A minimal NVTX 3 tool for the tests, loaded the way Nsight Systems is: a program's
// NVTX headers dlopen the library named by NVTX_INJECTION64_PATH and call its
// InitializeInjectionNvtx2, which fills the NVTX function tables (nvtxDetail/nvtxInit.h,
// nvtxImpl.h of the CUDA toolkit). It records push/pop ranges, per thread, and at exit
// writes them to the file named by TUNESCOPE_NVTX_RECORD, one line per range:
//   range <TAB> thread <TAB> domain <TAB> category name <TAB> path
// where path joins the names of the ranges open on that thread, outermost first, with
// '/'. Ranges still open at exit are written as "unclosed", pops with nothing pushed as
// "unbalanced-pop", so a test sees every mismatch.
#include <nvtx3/nvToolsExt.h>

#include <cstdio>
#include <cstdlib>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace {

const std::string kDefaultDomain = "(default)";

struct OpenRange {
  const std::string* domain;
  uint32_t category;
  std::string path;
};

class Recorder {
 public:
  ~Recorder() {
    const char* path = std::getenv("TUNESCOPE_NVTX_RECORD");
    if (!path) return;
    FILE* file = std::fopen(path, "w");
    if (!file) return;
    std::lock_guard lock(mutex_);
    for (const std::string& line : lines_) std::fprintf(file, "%s\n", line.c_str());
    for (const auto& [thread, stack] : stacks_)
      for (const OpenRange& open : stack)
        std::fprintf(file, "unclosed\t%d\t%s\n", thread, open.path.c_str());
    std::fclose(file);
  }

  nvtxDomainHandle_t create_domain(const char* name) {
    std::lock_guard lock(mutex_);
    // The handle is opaque to NVTX: ours points at the domain's name.
    return reinterpret_cast<nvtxDomainHandle_t>(&domains_.emplace_back(name ? name : ""));
  }

  void name_category(nvtxDomainHandle_t domain, uint32_t category, const char* name) {
    std::lock_guard lock(mutex_);
    category_names_[{domain_name(domain), category}] = name ? name : "";
  }

  void push(nvtxDomainHandle_t domain, uint32_t category, const char* message) {
    std::lock_guard lock(mutex_);
    std::vector<OpenRange>& stack = stacks_[thread_index()];
    std::string path = stack.empty() ? std::string() : stack.back().path + "/";
    stack.push_back({domain_name(domain), category, path + message});
  }

  void pop(nvtxDomainHandle_t domain) {
    std::lock_guard lock(mutex_);
    const int thread = thread_index();
    std::vector<OpenRange>& stack = stacks_[thread];
    if (stack.empty() || stack.back().domain != domain_name(domain)) {
      lines_.push_back("unbalanced-pop\t" + std::to_string(thread) + "\t" + *domain_name(domain));
      return;
    }
    const OpenRange& open = stack.back();
    auto category = category_names_.find({open.domain, open.category});
    lines_.push_back(
        "range\t" + std::to_string(thread) + "\t" + *open.domain + "\t" +
        (category == category_names_.end() ? std::to_string(open.category) : category->second) +
        "\t" + open.path);
    stack.pop_back();
  }

 private:
  static const std::string* domain_name(nvtxDomainHandle_t domain) {
    return domain ? reinterpret_cast<const std::string*>(domain) : &kDefaultDomain;
  }
  int thread_index() {
    thread_local int index = next_thread_++;
    return index;
  }

  std::mutex mutex_;
  std::deque<std::string> domains_;  // stable addresses: they are the handles
  std::map<std::pair<const std::string*, uint32_t>, std::string> category_names_;
  std::map<int, std::vector<OpenRange>> stacks_;
  std::vector<std::string> lines_;
  int next_thread_ = 0;
};

Recorder g_recorder;

const char* message_of(const nvtxEventAttributes_t* attributes) {
  if (!attributes) return "";
  if (attributes->messageType == NVTX_MESSAGE_TYPE_ASCII) return attributes->message.ascii;
  return "(non-ascii message)";
}
uint32_t category_of(const nvtxEventAttributes_t* attributes) {
  return attributes ? attributes->category : 0;
}

nvtxDomainHandle_t domain_create(const char* name) { return g_recorder.create_domain(name); }
void domain_name_category(nvtxDomainHandle_t domain, uint32_t category, const char* name) {
  g_recorder.name_category(domain, category, name);
}
int domain_push(nvtxDomainHandle_t domain, const nvtxEventAttributes_t* attributes) {
  g_recorder.push(domain, category_of(attributes), message_of(attributes));
  return 0;
}
int domain_pop(nvtxDomainHandle_t domain) {
  g_recorder.pop(domain);
  return 0;
}
void name_category(uint32_t category, const char* name) {
  g_recorder.name_category(nullptr, category, name);
}
int push_ex(const nvtxEventAttributes_t* attributes) { return domain_push(nullptr, attributes); }
int push_a(const char* message) {
  g_recorder.push(nullptr, 0, message ? message : "");
  return 0;
}
int pop() { return domain_pop(nullptr); }

template <typename Function>
bool install(NvtxFunctionTable table, unsigned int size, unsigned int id, Function function) {
  if (id >= size || !table[id]) return false;
  *table[id] = reinterpret_cast<NvtxFunctionPointer>(function);
  return true;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int InitializeInjectionNvtx2(
    NvtxGetExportTableFunc_t get_table) {
  const auto* callbacks =
      static_cast<const NvtxExportTableCallbacks*>(get_table(NVTX_ETID_CALLBACKS));
  if (!callbacks || callbacks->struct_size < sizeof(NvtxExportTableCallbacks)) return 0;
  NvtxFunctionTable core = nullptr, core2 = nullptr;
  unsigned int core_size = 0, core2_size = 0;
  if (!callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &core, &core_size) ||
      !callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &core2, &core2_size))
    return 0;
  // Default-domain ranges are recorded too, so a test sees ranges sent to the wrong domain.
  return install(core, core_size, NVTX_CBID_CORE_RangePushEx, push_ex) &&
         install(core, core_size, NVTX_CBID_CORE_RangePushA, push_a) &&
         install(core, core_size, NVTX_CBID_CORE_RangePop, pop) &&
         install(core, core_size, NVTX_CBID_CORE_NameCategoryA, name_category) &&
         install(core2, core2_size, NVTX_CBID_CORE2_DomainCreateA, domain_create) &&
         install(core2, core2_size, NVTX_CBID_CORE2_DomainNameCategoryA, domain_name_category) &&
         install(core2, core2_size, NVTX_CBID_CORE2_DomainRangePushEx, domain_push) &&
         install(core2, core2_size, NVTX_CBID_CORE2_DomainRangePop, domain_pop);
}
