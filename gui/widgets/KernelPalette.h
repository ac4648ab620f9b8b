// Colours of the timeline: one hue per kernel family (algorithm variants of a
// convolution as shades of it), muted colours per range category, and the dark
// background theme of the timeline canvas.
#pragma once

#include <QColor>

#include "models/KernelKind.h"
#include "profiler/Trace.h"

namespace tunescope::gui::palette {

QColor kernelColor(const KernelClass& kernel);
QColor rangeColor(profiler::RangeCategory category);
// Readable text colour on top of `fill`.
QColor textOn(const QColor& fill);

inline const QColor kCanvas{0x1d, 0x1f, 0x24};
inline const QColor kLaneAlternate{0x23, 0x26, 0x2c};
inline const QColor kHeader{0x2a, 0x2d, 0x34};
inline const QColor kHeaderText{0xdd, 0xe1, 0xe8};
inline const QColor kSubtleText{0x95, 0x9c, 0xa8};
inline const QColor kGrid{0x34, 0x38, 0x40};
inline const QColor kRuler{0x30, 0x33, 0x3b};
inline const QColor kSelection{0x5a, 0xa9, 0xff};
inline const QColor kFocus{0xff, 0xd8, 0x4d};
inline const QColor kCriticalPath{0xff, 0x4f, 0x8b};  // the critical path's outline
inline const QColor kDependency{0x4d, 0xe3, 0xd0};    // analyze's dependency arrows

}  // namespace tunescope::gui::palette
