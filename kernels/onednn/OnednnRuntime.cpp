#include "kernels/onednn/OnednnRuntime.h"

#include <omp.h>

#include "core/base/Error.h"

namespace tunescope::cpu::onednn {
namespace {

const char* runtime_name(unsigned runtime) {
  switch (runtime) {
    case DNNL_RUNTIME_OMP: return "OpenMP";
    case DNNL_RUNTIME_TBB: return "TBB";
    case DNNL_RUNTIME_SEQ: return "sequential";
    case DNNL_RUNTIME_THREADPOOL: return "threadpool";
    default: return "other";
  }
}

const char* isa_name(dnnl::cpu_isa isa) {
  switch (isa) {
    case dnnl::cpu_isa::sse41: return "sse41";
    case dnnl::cpu_isa::avx: return "avx";
    case dnnl::cpu_isa::avx2: return "avx2";
    case dnnl::cpu_isa::avx2_vnni: return "avx2_vnni";
    case dnnl::cpu_isa::avx512_mic: return "avx512_mic";
    case dnnl::cpu_isa::avx512_mic_4ops: return "avx512_mic_4ops";
    case dnnl::cpu_isa::avx512_core: return "avx512_core";
    case dnnl::cpu_isa::avx512_core_vnni: return "avx512_core_vnni";
    case dnnl::cpu_isa::avx512_core_bf16: return "avx512_core_bf16";
    case dnnl::cpu_isa::avx512_core_amx: return "avx512_core_amx";
    default: return "no vector extension";
  }
}

}  // namespace

const dnnl::engine& cpu_engine() {
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

SingleThreadedScope::SingleThreadedScope() : previous_(omp_get_max_threads()) {
  if (previous_ != 1) omp_set_num_threads(1);
}

SingleThreadedScope::~SingleThreadedScope() {
  if (previous_ != 1) omp_set_num_threads(previous_);
}

std::string library_description() {
  const dnnl_version_t* v = dnnl_version();
  return cat("oneDNN ", v->major, ".", v->minor, ".", v->patch, " (", runtime_name(v->cpu_runtime),
             " runtime, ", isa_name(dnnl::get_effective_cpu_isa()), ")");
}

}  // namespace tunescope::cpu::onednn
