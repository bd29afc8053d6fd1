#pragma once
/// The two robust objectives of robust_optimise.hpp, in a header of their own so that code that
/// only names a mode (case files, io/case) need not include the optimiser and the SpMV engine.
#include <string>

namespace penumbra::optimise {

enum class RobustMode {
  ExpectedValue,       ///< sum_s p_s f(D_s w)
  CompositeWorstCase,  ///< max_s f(D_s w), smoothed (robust_optimise.hpp says how)
};
const char* toString(RobustMode m);  ///< "expected", "cowc"
/// "expected" (or "expected-value"), "cowc" (or "worst-case"), case-insensitive; throws
/// InvalidArgument otherwise.
RobustMode parseRobustMode(const std::string& text);

}  // namespace penumbra::optimise
