#include "core/format.hpp"

#include <cstdio>

namespace penumbra {

std::string formatG(double v) { return formatNumber("%g", v); }

std::string formatNumber(const char* format, double v) {
  // Most texts fit the stack buffer; a longer one (a wide field, "%.0f" of 1e300) is written
  // again at its full length rather than cut off as the old fixed-buffer copies did.
  char small[96];
  const int n = std::snprintf(small, sizeof small, format, v);
  if (n < 0) return {};
  if (std::size_t(n) < sizeof small) return std::string(small, std::size_t(n));
  std::string text(std::size_t(n) + 1, '\0');
  std::snprintf(text.data(), text.size(), format, v);
  text.resize(std::size_t(n));
  return text;
}

}  // namespace penumbra
