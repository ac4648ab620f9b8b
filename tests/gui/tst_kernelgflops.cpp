// The kernel table's effective GFLOP/s column on a hand-made trace: each conv kernel
// shows the rate of the passes it ran in (flops from the trace's conv-layer metadata),
// other kernels stay blank, and the column sorts by the number.
#include <QtTest>

#include "models/KernelTableModel.h"
#include "models/TraceDocument.h"
#include "profiler/Roofline.h"

using namespace tunescope;
using namespace tunescope::gui;

namespace {
profiler::Activity kernel(const char* name, int64_t start, int64_t end) {
  profiler::Activity a;
  a.name = name;
  a.start_ns = start;
  a.end_ns = end;
  return a;
}

// conv1 (gemm, 1000 flops per pass): fwd = im2col 10 ns + sgemm 40 ns -> 20 GFLOP/s;
// conv2 (direct, 4000 flops): fwd 40 ns -> 100 GFLOP/s; a bias kernel in conv2's range.
profiler::Range layer(const char* name, int64_t start, int64_t end) {
  profiler::Range r;
  r.name = name;
  r.category = profiler::RangeCategory::layer;
  r.start_ns = start;
  r.end_ns = end;
  return r;
}

profiler::Trace trace() {
  profiler::Trace t;
  t.metadata.extra[profiler::kConvLayersKey] = profiler::conv_layers_to_json(
      {{"conv1", "gemm", "p1", 1000, 100}, {"conv2", "direct", "p2", 4000, 1000}});
  t.ranges.push_back(layer("conv1", 0, 100));
  t.activities.push_back(kernel("gemm.fwd.im2col", 0, 10));
  t.activities.push_back(kernel("gemm.fwd.sgemm", 10, 50));
  t.ranges.push_back(layer("conv2", 200, 300));
  t.activities.push_back(kernel("direct.fwd", 200, 240));
  t.activities.push_back(kernel("bias.fwd", 250, 260));
  return t;
}

QString cell(const KernelTableModel& model, const char* name, int role = Qt::DisplayRole) {
  for (int row = 0; row < model.rowCount(); ++row)
    if (model.index(row, KernelTableModel::NameColumn).data().toString() == QLatin1String(name))
      return model.index(row, KernelTableModel::GflopsColumn).data(role).toString();
  return QStringLiteral("(no row)");
}
}  // namespace

class KernelGflopsTest : public QObject {
  Q_OBJECT
 private slots:
  void showsEachConvKernelsPassRate() {
    const TraceDocument document(trace(), QStringLiteral("hand-made"));
    KernelTableModel model;
    model.setRows(document.kernelTable(), document.kernelPassRates());
    QCOMPARE(model.headerData(KernelTableModel::GflopsColumn, Qt::Horizontal, Qt::DisplayRole)
                 .toString(),
             QStringLiteral("Eff. GFLOP/s"));
    QCOMPARE(cell(model, "gemm.fwd.im2col"), QStringLiteral("20.0"));
    QCOMPARE(cell(model, "gemm.fwd.sgemm"), QStringLiteral("20.0"));
    QCOMPARE(cell(model, "direct.fwd"), QStringLiteral("100.0"));
    QCOMPARE(cell(model, "bias.fwd"), QString());
    QCOMPARE(cell(model, "direct.fwd", KernelTableModel::SortRole).toDouble(), 100.0);
  }
  void blankWithoutConvMetadata() {
    profiler::Trace t = trace();
    t.metadata.extra.clear();
    const TraceDocument document(std::move(t), QStringLiteral("foreign"));
    KernelTableModel model;
    model.setRows(document.kernelTable(), document.kernelPassRates());
    QCOMPARE(cell(model, "direct.fwd"), QString());
  }
};

QTEST_MAIN(KernelGflopsTest)
#include "tst_kernelgflops.moc"
