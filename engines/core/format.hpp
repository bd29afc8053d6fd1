#pragma once
/// Numbers as text for messages and reports: the one copy that engines, io, gui and app share
/// (formatBytes, for sizes, is in core/device.hpp).
#include <string>

namespace penumbra {

/// A number as printf's %g writes it ("3.5", "1e+06", "inf"): how messages echo values.
std::string formatG(double v);

/// One double through a printf format that converts exactly one double ("%.2f ms", "%12.4G").
/// Never cut short, however long the text; empty if the format cannot be written.
std::string formatNumber(const char* format, double v);

}  // namespace penumbra
