#pragma once
/// Plain-text rendering of ImportMessages for the CLI and logs (import_messages.hpp is the
/// fixed contract, so helpers live here).
#include <string>

#include "import_messages.hpp"

namespace penumbra::io {

/// One line per message, errors first: "error: ..." / "warning: ...". Empty when there are
/// no messages.
std::string formatMessages(const ImportMessages& messages);

}  // namespace penumbra::io
