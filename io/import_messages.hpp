#pragma once
/// User-facing outcome of an import: what went wrong (errors) and what the user should know
/// (warnings). Returned by every importer, never stored in a flag nobody reads.
#include <string>
#include <vector>

namespace penumbra::io {

struct ImportMessages {
  std::vector<std::string> warnings;
  std::vector<std::string> errors;

  bool ok() const { return errors.empty(); }
  void warn(std::string m) { warnings.push_back(std::move(m)); }
  void error(std::string m) { errors.push_back(std::move(m)); }
  void append(const ImportMessages& o) {
    warnings.insert(warnings.end(), o.warnings.begin(), o.warnings.end());
    errors.insert(errors.end(), o.errors.begin(), o.errors.end());
  }
};

}  // namespace penumbra::io
