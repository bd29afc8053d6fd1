#pragma once
/// How the DVH panel tells dose sets apart: one pen style per dose set (by its index in the
/// store), the same in the chart's curves, the dose-set list and the statistics table's icons,
/// so a table row and a curve can be matched by eye. Shared by dvh_panel*.cpp only.
#include <QIcon>

namespace penumbra::gui {

/// Pen style of the dose set at `doseSetIndex` (solid, dash, dot, dash-dot, dash-dot-dot, then
/// again from solid).
Qt::PenStyle doseSetLineStyle(int doseSetIndex);
/// A short black line in `style` (28 x 14 px), for list items and table cells.
QIcon lineStyleIcon(Qt::PenStyle style);

}  // namespace penumbra::gui
