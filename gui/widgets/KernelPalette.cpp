// Timeline colours (Tableau-10 hues: distinct, and readable with dark text).
#include "widgets/KernelPalette.h"

namespace tunescope::gui::palette {

namespace {
// Direct is the base shade; GEMM lighter, FFT darker, so a family stays one hue.
QColor shade(QColor base, ConvAlgorithmFamily algorithm) {
  switch (algorithm) {
    case ConvAlgorithmFamily::gemm: return base.lighter(128);
    case ConvAlgorithmFamily::fft: return base.darker(135);
    default: return base;
  }
}
}  // namespace

QColor kernelColor(const KernelClass& k) {
  switch (k.family) {
    case KernelFamily::convForward: return shade(QColor(0x4e, 0x8f, 0xe0), k.algorithm);
    case KernelFamily::convBackwardData: return shade(QColor(0xf2, 0x8e, 0x2b), k.algorithm);
    case KernelFamily::convBackwardFilter: return shade(QColor(0xe1, 0x57, 0x59), k.algorithm);
    case KernelFamily::batchNorm: return QColor(0x59, 0xa1, 0x4f);
    case KernelFamily::relu: return QColor(0xed, 0xc9, 0x48);
    case KernelFamily::pooling: return QColor(0x76, 0xb7, 0xb2);
    case KernelFamily::fullyConnected: return QColor(0xb0, 0x7a, 0xa1);
    case KernelFamily::update: return QColor(0xff, 0x9d, 0xa7);
    case KernelFamily::transpose: return QColor(0x9c, 0x75, 0x5f);
    case KernelFamily::memory: return QColor(0xba, 0xb0, 0xac);
    case KernelFamily::elementwise: return QColor(0x8c, 0xd1, 0x7d);
    case KernelFamily::other: break;
  }
  return QColor(0x8a, 0x80, 0x7e);
}

QColor rangeColor(profiler::RangeCategory category) {
  using profiler::RangeCategory;
  switch (category) {
    case RangeCategory::run: return QColor(0x4a, 0x50, 0x5e);
    case RangeCategory::candidate: return QColor(0x5e, 0x4b, 0x7a);
    case RangeCategory::iteration: return QColor(0x2f, 0x5f, 0x7d);
    case RangeCategory::layer: return QColor(0x3d, 0x63, 0x4c);
    case RangeCategory::phase: return QColor(0x6d, 0x5a, 0x3a);
  }
  return QColor(0x50, 0x50, 0x50);
}

QColor textOn(const QColor& fill) {
  return fill.lightnessF() > 0.55 ? QColor(0x15, 0x17, 0x1c) : QColor(0xf2, 0xf4, 0xf8);
}

}  // namespace tunescope::gui::palette
