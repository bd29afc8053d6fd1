#pragma once
/// "1 beam", "2 beams": counts with the noun in the right number, for every label and message
/// of the GUI ("1 runs" read as a typo). Header-only; English nouns with a regular plural unless
/// the plural is given.
#include <QString>

namespace penumbra::gui {

/// `n` followed by `singular` (n == 1) or `plural` (default: singular + "s").
inline QString countOf(long long n, const char* singular, const char* plural = nullptr) {
  const QString noun = n == 1 ? QString::fromUtf8(singular)
                              : (plural ? QString::fromUtf8(plural) : QString::fromUtf8(singular) + "s");
  return QString::number(n) + ' ' + noun;
}

}  // namespace penumbra::gui
