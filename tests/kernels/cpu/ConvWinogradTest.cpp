// The winograd algorithm, F(2x2, 3x3) and F(4x4, 3x3), on every instruction-set path this
// CPU runs and both schedules (waves; fused, NHWC only): all three passes against a
// double-precision reference and against `direct`, both layouts, odd sizes, padding 0..3 (backward
// data then pads by 2..-1), channel counts that fill no vector, batch 1 and more, several waves;
// plus the tile rule, the refusals and the ISA choice.
#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "ConvTestSupport.h"
#include "core/base/AlignedBuffer.h"
#include "core/base/Error.h"
#include "core/base/Registry.h"
#include "kernels/cpu/ConvWinograd.h"
#include "profiler/Tracer.h"

namespace tunescope::conv_test {
namespace {

using cpu::ConvWinograd;
using cpu::CpuIsa;
using cpu::WinogradSchedule;
using cpu::WinogradTile;

// Stated error bounds, max |winograd - reference| / max |reference|, with operands
// uniform in [-1, 1) and the double reference of ConvTestSupport (worst measured over
// winograd_cases() on the AVX-512 path, 2026-12-04):
//   F(2x2): 1e-5. Its transforms only add and halve, so it errs like a float sum in
//     another order: worst 6.7e-7 (backward filter, several_waves).
//   F(4x4): 1e-4. Its points +-2 put factors up to 8 in A^T and 1/24 in G, so a tile
//     sums terms much larger than its result before they cancel: worst 1.1e-5
//     (backward filter, several_waves: sums over 1024 tiles), about 15x F(2x2)'s, and
//     growing with the length of the sums (Lavin & Gray 2016, section 5; Barabasz et
//     al., "Error analysis and improving the accuracy of Winograd convolution for deep
//     neural networks", ACM TOMS 2020).
double tolerance_for(WinogradTile tile) { return tile == WinogradTile::f4 ? 1e-4 : 1e-5; }

std::vector<NamedProblem> winograd_cases() {
  return {
      {"batch1_odd_pad1", make_problem(1, 3, 7, 9, 5, 3, 3, 1, 1, 1, 1)},
      {"odd_pad0", make_problem(3, 5, 9, 11, 7, 3, 3, 1, 1, 0, 0)},
      {"c17_k19_pad1", make_problem(2, 17, 12, 10, 19, 3, 3, 1, 1, 1, 1)},
      {"c16_k16_8x8", make_problem(2, 16, 8, 8, 16, 3, 3, 1, 1, 1, 1)},
      {"pad2", make_problem(2, 9, 6, 13, 11, 3, 3, 1, 1, 2, 2)},
      {"pad3_tiny", make_problem(2, 2, 3, 4, 3, 3, 3, 1, 1, 3, 3)},
      {"pad0x1_3x3", make_problem(3, 4, 3, 3, 6, 3, 3, 1, 1, 0, 1)},
      // More tiles than one wave holds (ConvWinograd.cpp's budget) with either tile; for
      // the fused schedule, many blocks over several tasks whose dU sums are added.
      {"several_waves", make_problem(16, 32, 32, 32, 32, 3, 3, 1, 1, 1, 1)},
      // Fused: wide channels, so blocks hold few tiles: the small GEMM's short row blocks
      // (4, 2, 1 rows), its 4-, 2- and 1-vector column blocks and a short last block run.
      {"wide_c96_k80", make_problem(3, 96, 9, 7, 80, 3, 3, 1, 1, 1, 1)},
  };
}

using WinogradParam = std::tuple<WinogradTile, CpuIsa, WinogradSchedule, NamedProblem, Layout>;

// The double reference and direct's result of one case, pass and layout, computed once:
// every tile and path compares with the same ones.
const std::pair<Tensor, Tensor>& expected(const std::string& key,
                                          const std::function<Tensor()>& reference,
                                          const std::function<Tensor()>& direct) {
  static std::map<std::string, std::pair<Tensor, Tensor>> cache;
  auto it = cache.find(key);
  if (it == cache.end()) it = cache.emplace(key, std::make_pair(reference(), direct())).first;
  return it->second;
}

class WinogradMatchesReference : public ::testing::TestWithParam<WinogradParam> {
 protected:
  void SetUp() override {
    const auto& [tile, isa, schedule, named, layout] = GetParam();
    if (!cpu::cpu_supports(isa))
      GTEST_SKIP() << "this CPU cannot run the " << cpu::to_string(isa) << " path";
    algo = std::make_unique<ConvWinograd>(tile, isa, schedule);
    problem = with_layout(named.problem, layout);
    if (schedule == WinogradSchedule::fused && layout == Layout::NCHW) {
      EXPECT_NE(algo->unsupported_reason(problem).find("fused schedule runs NHWC only"),
                std::string::npos)
          << algo->unsupported_reason(problem);
      GTEST_SKIP() << "the fused schedule refuses NCHW";
    }
    ASSERT_EQ(algo->schedule_for(problem), schedule);
    ASSERT_TRUE(algo->supports(problem)) << algo->unsupported_reason(problem);
    tolerance = tolerance_for(tile);
    ops = random_operands(problem, 71);
  }

  std::unique_ptr<ConvWinograd> algo;
  std::unique_ptr<ConvAlgorithm> direct = Registry::instance().make_conv_algorithm("cpu", "direct");
  ThreadPool pool{3};
  ConvProblem problem;
  double tolerance = 0;
  ConvOperands ops;  // the same for every tile and path (fixed seed)

  std::string key(const char* pass) const {
    return std::get<3>(GetParam()).name + "/" + to_string(problem.layout) + "/" + pass;
  }
};

TEST_P(WinogradMatchesReference, Forward) {
  const auto& [reference, by_direct] = expected(
      key("fwd"), [&] { return reference_forward(problem, ops.x, ops.w); },
      [&] { return run_forward(*direct, problem, pool, ops.x, ops.w); });
  const Tensor y = run_forward(*algo, problem, pool, ops.x, ops.w);
  EXPECT_LE(relative_error(y, reference), tolerance);
  EXPECT_LE(relative_error(y, by_direct), tolerance);
}

TEST_P(WinogradMatchesReference, BackwardData) {
  const auto& [reference, by_direct] = expected(
      key("bwd_data"), [&] { return reference_backward_data(problem, ops.dy, ops.w); },
      [&] { return run_backward_data(*direct, problem, pool, ops.dy, ops.w); });
  const Tensor dx = run_backward_data(*algo, problem, pool, ops.dy, ops.w);
  EXPECT_LE(relative_error(dx, reference), tolerance);
  EXPECT_LE(relative_error(dx, by_direct), tolerance);
}

TEST_P(WinogradMatchesReference, BackwardFilter) {
  const auto& [reference, by_direct] = expected(
      key("bwd_filter"), [&] { return reference_backward_filter(problem, ops.x, ops.dy); },
      [&] { return run_backward_filter(*direct, problem, pool, ops.x, ops.dy); });
  const Tensor dw = run_backward_filter(*algo, problem, pool, ops.x, ops.dy);
  EXPECT_LE(relative_error(dw, reference), tolerance);
  EXPECT_LE(relative_error(dw, by_direct), tolerance);
}

std::string param_name(const ::testing::TestParamInfo<WinogradParam>& info) {
  return std::string(cpu::to_string(std::get<0>(info.param))) + "_" +
         cpu::to_string(std::get<1>(info.param)) + "_" + cpu::to_string(std::get<2>(info.param)) +
         "_" + std::get<3>(info.param).name + "_" + to_string(std::get<4>(info.param));
}

INSTANTIATE_TEST_SUITE_P(
    TilesIsasShapesLayouts, WinogradMatchesReference,
    ::testing::Combine(::testing::Values(WinogradTile::f2, WinogradTile::f4),
                       ::testing::Values(CpuIsa::scalar, CpuIsa::avx2, CpuIsa::avx512),
                       ::testing::Values(WinogradSchedule::waves, WinogradSchedule::fused),
                       ::testing::ValuesIn(winograd_cases()),
                       ::testing::Values(Layout::NCHW, Layout::NHWC)),
    param_name);

// Every path computes the same thing: scalar and vector paths agree to float rounding,
// in both schedules. The fused schedule's products round differently per path (the
// vector paths fuse multiply and add, the scalar one does not), and F(4x4)'s output
// transform (factors up to 8) magnifies that: 1e-6 for F(2x2), 1e-5 for F(4x4) (worst
// measured 2.4e-6, AVX-512 against scalar, 2026-12-05).
TEST(WinogradIsaPaths, AgreeWithEachOther) {
  const ConvProblem p = with_layout(make_problem(2, 19, 11, 9, 21, 3, 3, 1, 1, 1, 1), Layout::NHWC);
  const ConvOperands ops = random_operands(p, 72);
  ThreadPool pool(2);
  for (WinogradSchedule schedule : {WinogradSchedule::waves, WinogradSchedule::fused})
    for (WinogradTile tile : {WinogradTile::f2, WinogradTile::f4}) {
      ConvWinograd scalar(tile, CpuIsa::scalar, schedule);
      const Tensor want = run_forward(scalar, p, pool, ops.x, ops.w);
      for (CpuIsa isa : cpu::supported_cpu_isas()) {
        ConvWinograd algo(tile, isa, schedule);
        EXPECT_LE(relative_error(run_forward(algo, p, pool, ops.x, ops.w), want),
                  tile == WinogradTile::f4 ? 1e-5 : 1e-6)
            << cpu::to_string(tile) << " " << cpu::to_string(isa) << " "
            << cpu::to_string(schedule);
      }
    }
}

TEST(WinogradTileRule, PicksF4WhereItSavesAQuarterOfTheProducts) {
  auto square = [](int64_t size, int64_t pad) {
    return make_problem(1, 1, size, size, 1, 3, 3, 1, 1, pad, pad);
  };
  // resnet18-small's 3x3 stride-1 layers: 32, 16, 8 and 4 wide, padding 1.
  for (int64_t size : {32, 16, 8, 4})
    EXPECT_EQ(cpu::winograd_tile_size(WinogradTile::automatic, square(size, 1)), 4) << size;
  // 5x5 and 6x6 outputs: 9 F2 tiles (144 products) against 4 F4 tiles (144).
  EXPECT_EQ(cpu::winograd_tile_size(WinogradTile::automatic, square(5, 1)), 2);
  EXPECT_EQ(cpu::winograd_tile_size(WinogradTile::automatic, square(8, 0)), 2);  // 6x6 output
  EXPECT_EQ(cpu::winograd_tile_size(WinogradTile::automatic, square(3, 0)),
            2);  // 1x1: 16 against 36
  EXPECT_EQ(cpu::winograd_tile_size(WinogradTile::f2, square(32, 1)), 2);
  EXPECT_EQ(cpu::winograd_tile_size(WinogradTile::f4, square(5, 1)), 4);
  EXPECT_EQ(cpu::parse_winograd_tile("f4"), WinogradTile::f4);
  EXPECT_EQ(cpu::parse_winograd_tile("auto"), WinogradTile::automatic);
  EXPECT_EQ(cpu::parse_winograd_tile("f6"), std::nullopt);
}

TEST(Winograd, RefusesWhatItCannotRunWithAReason) {
  ConvWinograd algo;
  const ConvProblem five = make_problem(1, 2, 9, 9, 2, 5, 5, 1, 1, 2, 2);
  EXPECT_NE(algo.unsupported_reason(five).find("3x3 filters only, not 5x5"), std::string::npos)
      << algo.unsupported_reason(five);
  const ConvProblem strided = make_problem(1, 2, 9, 9, 2, 3, 3, 2, 2, 1, 1);
  EXPECT_NE(algo.unsupported_reason(strided).find("stride 1 only, not 2x2"), std::string::npos)
      << algo.unsupported_reason(strided);
  const ConvProblem huge = make_problem(1, 8192, 64, 64, 8192, 3, 3, 1, 1, 1, 1);
  EXPECT_NE(algo.unsupported_reason(huge).find("MiB of workspace (limit 4096 MiB)"),
            std::string::npos)
      << algo.unsupported_reason(huge);
  EXPECT_EQ(algo.workspace_bytes(huge), 0u);
  EXPECT_EQ(algo.workspace_bytes(five), 0u);
  ThreadPool pool(1);
  const ConvOperands ops = random_operands(strided, 73);
  EXPECT_THROW(run_forward(algo, strided, pool, ops.x, ops.w), Error);
}

// Each step of each pass is its own traced kernel, so a trace shows where the time goes.
TEST(Winograd, TracesEveryStep) {
  const ConvProblem p = make_problem(2, 5, 9, 9, 6, 3, 3, 1, 1, 1, 1);
  const ConvOperands ops = random_operands(p, 74);
  ConvWinograd algo;
  ThreadPool pool(2);
  profiler::Tracer tracer;
  const ExecContext exec{pool, &tracer};
  const size_t bytes = algo.workspace_bytes(p);
  AlignedBuffer workspace(bytes);
  const ConvCall call{p, exec, workspace.data(), bytes};
  Tensor y(p.output(), p.layout), dx(p.input, p.layout), dw(p.filter(), p.layout);
  tracer.start();
  algo.forward(call, ops.x, ops.w, y);
  algo.backward_data(call, ops.dy, ops.w, dx);
  algo.backward_filter(call, ops.x, ops.dy, dw);
  tracer.stop();
  std::set<std::string> names;
  for (const profiler::Activity& a : tracer.collect({}).activities) names.insert(a.name);
  const std::set<std::string> expected = {"winograd.fwd.filter_transform",
                                          "winograd.fwd.input_transform",
                                          "winograd.fwd.gemm",
                                          "winograd.fwd.output_transform",
                                          "winograd.bwd_data.filter_transform",
                                          "winograd.bwd_data.input_transform",
                                          "winograd.bwd_data.gemm",
                                          "winograd.bwd_data.output_transform",
                                          "winograd.bwd_filter.input_transform",
                                          "winograd.bwd_filter.dy_transform",
                                          "winograd.bwd_filter.gemm",
                                          "winograd.bwd_filter.filter_transform"};
  EXPECT_EQ(names, expected);
}

// The fused schedule (NHWC by default) traces one kernel per pass besides the filter
// transforms (backward filter's adds the tasks' dU as it reads them).
TEST(Winograd, FusedScheduleTracesOneKernelPerPass) {
  const ConvProblem p =
      with_layout(make_problem(8, 16, 16, 16, 16, 3, 3, 1, 1, 1, 1), Layout::NHWC);
  const ConvOperands ops = random_operands(p, 75);
  ConvWinograd algo(WinogradTile::f2);
  ASSERT_EQ(algo.schedule_for(p), WinogradSchedule::fused);
  EXPECT_EQ(algo.schedule_for(with_layout(p, Layout::NCHW)), WinogradSchedule::waves);
  // Wide layers (in x out channels > 64 x 64) keep the waves.
  EXPECT_EQ(algo.schedule_for(
                with_layout(make_problem(1, 128, 4, 4, 128, 3, 3, 1, 1, 1, 1), Layout::NHWC)),
            WinogradSchedule::waves);
  ThreadPool pool(2);
  profiler::Tracer tracer;
  const ExecContext exec{pool, &tracer};
  const size_t bytes = algo.workspace_bytes(p);
  AlignedBuffer workspace(bytes);
  const ConvCall call{p, exec, workspace.data(), bytes};
  Tensor y(p.output(), p.layout), dx(p.input, p.layout), dw(p.filter(), p.layout);
  tracer.start();
  algo.forward(call, ops.x, ops.w, y);
  algo.backward_data(call, ops.dy, ops.w, dx);
  algo.backward_filter(call, ops.x, ops.dy, dw);
  tracer.stop();
  std::set<std::string> names;
  for (const profiler::Activity& a : tracer.collect({}).activities) names.insert(a.name);
  const std::set<std::string> expected = {
      "winograd.fwd.filter_transform",      "winograd.fwd.fused",
      "winograd.bwd_data.filter_transform", "winograd.bwd_data.fused",
      "winograd.bwd_filter.fused",          "winograd.bwd_filter.filter_transform"};
  EXPECT_EQ(names, expected);
}

TEST(Winograd, HonoursTheIsaVariable) {
  const char* saved = std::getenv("TUNESCOPE_WINOGRAD_ISA");
  const std::string restore = saved ? saved : "";
  unsetenv("TUNESCOPE_WINOGRAD_ISA");
  EXPECT_EQ(ConvWinograd().isa(), cpu::supported_cpu_isas().back());
  for (CpuIsa isa : cpu::supported_cpu_isas()) {
    setenv("TUNESCOPE_WINOGRAD_ISA", cpu::to_string(isa), 1);
    EXPECT_EQ(ConvWinograd().isa(), isa);
    EXPECT_EQ(
        dynamic_cast<ConvWinograd&>(*Registry::instance().make_conv_algorithm("cpu", "winograd"))
            .isa(),
        isa);
  }
  setenv("TUNESCOPE_WINOGRAD_ISA", "sse9", 1);
  try {
    ConvWinograd algo;
    ADD_FAILURE() << "an unknown path was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::usage);
    EXPECT_NE(std::string(e.what()).find("TUNESCOPE_WINOGRAD_ISA: unknown path 'sse9'"),
              std::string::npos)
        << e.what();
  }
  if (restore.empty())
    unsetenv("TUNESCOPE_WINOGRAD_ISA");
  else
    setenv("TUNESCOPE_WINOGRAD_ISA", restore.c_str(), 1);
}

}  // namespace
}  // namespace tunescope::conv_test
