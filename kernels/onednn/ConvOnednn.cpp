// The onednn:* convolution algorithms: oneDNN's convolution primitives (direct, auto,
// winograd) for the "cpu" backend, with primitives cached per problem and pass.
//
// Threads: the batch is cut into parallel_slots() parts (OnednnConvPlan.h) that our
// pool runs, each part single-threaded inside oneDNN (SingleThreadedScope): oneDNN
// never starts an OpenMP team, so nothing spins beside our pool, several lanes can run
// primitives at once, and the workspace (scratchpads, reorder buffers: oneDNN's
// user-managed scratchpad) does not depend on the pool.
// Every reorder between our layout and oneDNN's is a kernel of its own in the trace
// ("<algorithm>.<pass>.reorder_<operand>"); the compute kernel is named after the
// implementation oneDNN chose ("onednn:auto.fwd.jit:avx512_core").
#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <mutex>

#include "core/base/ConvAlgorithm.h"
#include "core/base/Error.h"
#include "core/base/Registry.h"
#include "core/base/ThreadPool.h"
#include "kernels/onednn/OnednnConvPlan.h"
#include "kernels/onednn/OnednnRuntime.h"
#include "kernels/shared/ConvArgs.h"
#include "profiler/Tracer.h"

namespace tunescope::cpu::onednn {
namespace {

using dnnl::memory;

// Streams are not thread-safe; each thread executing a primitive uses its own.
dnnl::stream& thread_stream() {
  thread_local dnnl::stream stream(cpu_engine());
  return stream;
}

// Trace names must outlive the tracer, not just this algorithm.
const char* traced(const ExecContext& ex, const std::string& name) {
  return ex.tracer ? ex.tracer->intern(name) : nullptr;
}

memory wrap(const memory::desc& desc, const void* data) {
  return memory(desc, cpu_engine(), const_cast<void*>(data));
}

void convert(const Operand& op, const memory& from, const memory& to, char* scratch) {
  op.convert.execute(thread_stream(), {{DNNL_ARG_FROM, from},
                                       {DNNL_ARG_TO, to},
                                       {DNNL_ARG_SCRATCHPAD, wrap(op.convert_scratch, scratch)}});
}

// Elements of one image of an activation operand (in our layout).
int64_t image_elements(const Operand& op, int64_t mb) {
  return static_cast<int64_t>(op.user.get_size() / sizeof(float)) / mb;
}

class ConvOnednn final : public ConvAlgorithm {
 public:
  ConvOnednn(std::string name, dnnl::algorithm algorithm)
      : name_(std::move(name)), algorithm_(algorithm) {}

  std::string name() const override { return name_; }

  std::string unsupported_reason(const ConvProblem& problem) const override {
    if (std::string why = invalid_problem_reason(problem); !why.empty()) return why;
    try {
      for (ConvPass pass : {ConvPass::forward, ConvPass::backward_data, ConvPass::backward_filter})
        plan(problem, pass);
    } catch (const Error& error) {
      return error.what();
    }
    return {};
  }

  size_t workspace_bytes(const ConvProblem& problem) const override {
    if (!supports(problem)) return 0;
    size_t most = 0;
    for (ConvPass pass : {ConvPass::forward, ConvPass::backward_data, ConvPass::backward_filter})
      most = std::max(most, plan(problem, pass).total_bytes);
    return most;
  }

  void forward(const ConvCall& call, const Tensor& x, const Tensor& w, Tensor& y) override {
    run(call, ConvPass::forward, x, w, y);
  }
  void backward_data(const ConvCall& call, const Tensor& dy, const Tensor& w, Tensor& dx) override {
    run(call, ConvPass::backward_data, dy, w, dx);
  }
  void backward_filter(const ConvCall& call, const Tensor& x, const Tensor& dy,
                       Tensor& dw) override {
    run(call, ConvPass::backward_filter, x, dy, dw);
  }

 private:
  // The cached plan; throws Error(unsupported) saying why oneDNN has none.
  const PassPlan& plan(const ConvProblem& problem, ConvPass pass) const {
    const std::string key = cat(problem.key(), "/", pass_tag(pass));
    std::lock_guard lock(mutex_);
    if (auto it = plans_.find(key); it != plans_.end()) return *it->second;
    if (auto it = refusals_.find(key); it != refusals_.end())
      fail(ErrorKind::unsupported, it->second);
    try {
      SingleThreadedScope single;
      auto made = std::make_unique<PassPlan>(make_pass_plan(name_, algorithm_, pass, problem));
      return *plans_.emplace(key, std::move(made)).first->second;
    } catch (const dnnl::error& error) {
      std::string why = cat(library_description(), " has no ", name_, " implementation of the ",
                            pass_tag(pass), " pass for ", problem.key(), " (", error.what(), ")");
      if (algorithm_ == dnnl::algorithm::convolution_winograd)
        why +=
            "; its only f32 Winograd kernel (jit_wino_4x3) needs at least AVX-512 and a 3x3 "
            "stride-1 filter";
      refusals_.emplace(key, why);
      fail(ErrorKind::unsupported, why);
    }
  }

  // a, b, out as in PassPlan.
  void run(const ConvCall& call, ConvPass pass, const Tensor& a, const Tensor& b, Tensor& out) {
    check_conv_args(name_, pass, call.problem, a, b, out);
    const PassPlan& plan = this->plan(call.problem, pass);
    check_workspace(name_, call, workspace_bytes(call.problem));
    try {
      run_plan(call, plan, a, b, out);
    } catch (const dnnl::error& error) {
      fail(ErrorKind::runtime, "conv ", plan.compute_kernel, " on ", call.problem.key(), ": ",
           error.what());
    }
  }

  void run_plan(const ConvCall& call, const PassPlan& plan, const Tensor& a, const Tensor& b,
                Tensor& out) const {
    const ConvProblem& p = call.problem;
    const ExecContext& ex = call.exec;
    const int64_t n = p.input.n;
    const bool weights_is_b = plan.pass != ConvPass::backward_filter;
    const SizedPrimitive& first = plan.sizes[0];
    char* workspace = static_cast<char*>(call.workspace);
    char* weights = workspace;  // the shared part
    const auto slot = [&](int64_t s) {
      return workspace + plan.shared_bytes + s * plan.slot_bytes;
    };
    const auto scratch = [&](int64_t s) { return slot(s) + plan.scratch_offset; };
    // Where slot s's part of an activation operand starts in our tensor.
    const auto part = [&](const Operand& op, const Tensor& t, int64_t s, int64_t mb) {
      return const_cast<float*>(t.data()) + plan.first(s, n) * image_elements(op, mb);
    };
    const auto mb_of = [&](int64_t s) { return plan.first(s + 1, n) - plan.first(s, n); };
    const auto for_each_slot =
        [&](const std::function<void(int64_t, const SizedPrimitive&)>& body) {
          ex.pool.parallel_for(plan.slots, [&](int64_t begin, int64_t end) {
            SingleThreadedScope single;
            for (int64_t s = begin; s < end; ++s) body(s, plan.for_mb(mb_of(s)));
          });
        };
    const auto reorder_kernel = [&](const Operand& op) {
      return plan.kernel_prefix + "reorder_" + op.role;
    };
    SingleThreadedScope single;

    // The filter into the primitive's layout, once for all slots.
    if (weights_is_b && first.b.needs_reorder()) {
      const std::string kernel = reorder_kernel(first.b);
      profiler::KernelScope k(ex.tracer, traced(ex, kernel), ex.device, ex.lane, 0,
                              2.0 * b.bytes());
      convert(first.b, wrap(first.b.user, b.data()), wrap(first.b.inner, weights), scratch(0));
    }
    // Activation inputs into the primitive's layout, each slot its part.
    const auto reorder_input = [&](const Tensor& t, Operand SizedPrimitive::*member) {
      if (!plan.any_reorder(member)) return;
      const std::string kernel = reorder_kernel(first.*member);
      profiler::KernelScope k(ex.tracer, traced(ex, kernel), ex.device, ex.lane, 0,
                              2.0 * t.bytes());
      for_each_slot([&](int64_t s, const SizedPrimitive& sp) {
        const Operand& op = sp.*member;
        if (op.needs_reorder())
          convert(op, wrap(op.user, part(op, t, s, sp.mb)), wrap(op.inner, slot(s) + op.offset),
                  scratch(s));
      });
    };
    reorder_input(a, &SizedPrimitive::a);
    if (!weights_is_b) reorder_input(b, &SizedPrimitive::b);

    // The convolution itself.
    const bool out_per_slot =
        plan.any_reorder(&SizedPrimitive::out) || (!weights_is_b && plan.slots > 1);
    {
      profiler::KernelScope k(ex.tracer, traced(ex, plan.compute_kernel), ex.device, ex.lane,
                              p.flops(), conv_pass_bytes(p));
      for_each_slot([&](int64_t s, const SizedPrimitive& sp) {
        const void* a_data = sp.a.needs_reorder() ? static_cast<const void*>(slot(s) + sp.a.offset)
                                                  : part(sp.a, a, s, sp.mb);
        const void* b_data =
            weights_is_b ? (sp.b.needs_reorder() ? static_cast<const void*>(weights) : b.data())
                         : (sp.b.needs_reorder() ? static_cast<const void*>(slot(s) + sp.b.offset)
                                                 : part(sp.b, b, s, sp.mb));
        const bool own_out = weights_is_b ? sp.out.needs_reorder() : out_per_slot;
        const void* out_data = own_out        ? static_cast<const void*>(slot(s) + sp.out.offset)
                               : weights_is_b ? part(sp.out, out, s, sp.mb)
                                              : out.data();
        sp.compute.execute(thread_stream(), {{sp.a.arg, wrap(sp.a.inner, a_data)},
                                             {sp.b.arg, wrap(sp.b.inner, b_data)},
                                             {sp.out.arg, wrap(sp.out.inner, out_data)},
                                             {DNNL_ARG_SCRATCHPAD, wrap(sp.scratch, scratch(s))}});
      });
    }

    if (weights_is_b) {  // each slot's part of the output into our layout
      if (!out_per_slot) return;
      const std::string kernel = reorder_kernel(first.out);
      profiler::KernelScope k(ex.tracer, traced(ex, kernel), ex.device, ex.lane, 0,
                              2.0 * out.bytes());
      for_each_slot([&](int64_t s, const SizedPrimitive& sp) {
        if (sp.out.needs_reorder())
          convert(sp.out, wrap(sp.out.inner, slot(s) + sp.out.offset),
                  wrap(sp.out.user, part(sp.out, out, s, sp.mb)), scratch(s));
      });
      return;
    }
    if (!out_per_slot) return;  // one slot wrote dw itself
    // Backward filter: sum the slots' partial filters (all in the first's layout), into dw
    // directly when that is our layout, else into slot 0's, then reorder that into dw.
    const int64_t elements = static_cast<int64_t>(first.out.inner.get_size() / sizeof(float));
    const auto partial = [&](int64_t s) {
      return reinterpret_cast<float*>(slot(s) + first.out.offset);
    };
    if (plan.slots > 1) {
      const std::string kernel = plan.kernel_prefix + "reduce";
      float* target = first.out.needs_reorder() ? partial(0) : out.data();
      profiler::KernelScope k(ex.tracer, traced(ex, kernel), ex.device, ex.lane,
                              static_cast<double>(plan.slots * elements),
                              (plan.slots + 1) * elements * 4.0);
      ex.pool.parallel_for(
          elements,
          [&](int64_t begin, int64_t end) {
            for (int64_t i = begin; i < end; ++i) {
              float sum = partial(0)[i];
              for (int64_t s = 1; s < plan.slots; ++s) sum += partial(s)[i];
              target[i] = sum;
            }
          },
          1024);
    }
    if (first.out.needs_reorder()) {
      const std::string kernel = reorder_kernel(first.out);
      profiler::KernelScope k(ex.tracer, traced(ex, kernel), ex.device, ex.lane, 0,
                              2.0 * out.bytes());
      convert(first.out, wrap(first.out.inner, partial(0)), wrap(first.out.user, out.data()),
              scratch(0));
    }
  }

  std::string name_;
  dnnl::algorithm algorithm_;
  mutable std::mutex mutex_;
  mutable std::map<std::string, std::unique_ptr<PassPlan>> plans_;
  mutable std::map<std::string, std::string> refusals_;
};

template <dnnl::algorithm kAlgorithm>
struct Registration {
  explicit Registration(const char* name)
      : registration("cpu", name, [name](const KnobValues&) {
          return std::make_unique<ConvOnednn>(name, kAlgorithm);
        }) {}
  ConvAlgorithmRegistration registration;
};

const Registration<dnnl::algorithm::convolution_direct> direct_registration("onednn:direct");
const Registration<dnnl::algorithm::convolution_auto> auto_registration("onednn:auto");
const Registration<dnnl::algorithm::convolution_winograd> winograd_registration("onednn:winograd");

}  // namespace
}  // namespace tunescope::cpu::onednn
