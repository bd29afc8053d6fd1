#include "format_messages.hpp"

namespace penumbra::io {

std::string formatMessages(const ImportMessages& messages) {
  std::string out;
  for (const auto& e : messages.errors) out += "error: " + e + "\n";
  for (const auto& w : messages.warnings) out += "warning: " + w + "\n";
  return out;
}

}  // namespace penumbra::io
