#include "core/structure.hpp"

#include <algorithm>
#include <cctype>

namespace penumbra {

StructureKind structureKindFromInterpretedType(const std::string& type) {
  std::string t = type;
  std::transform(t.begin(), t.end(), t.begin(), [](unsigned char c) { return std::toupper(c); });
  if (t == "EXTERNAL") return StructureKind::External;
  if (t == "PTV" || t == "CTV" || t == "GTV") return StructureKind::Target;
  if (t == "ORGAN" || t == "AVOIDANCE") return StructureKind::OrganAtRisk;
  return StructureKind::Other;
}

const char* toString(StructureKind kind) {
  switch (kind) {
    case StructureKind::External: return "external";
    case StructureKind::Target: return "target";
    case StructureKind::OrganAtRisk: return "organ at risk";
    case StructureKind::Other: return "other";
  }
  return "other";
}

}  // namespace penumbra
