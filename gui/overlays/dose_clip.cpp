#include "gui/overlays/dose_clip.hpp"

#include <cctype>
#include <cmath>

#include "gui/model/patient_scene.hpp"

namespace penumbra::gui {

namespace {

bool hasMask(const Structure& s) {
  return !s.mask.empty() && s.mask.data.size() == s.mask.grid.voxelCount();
}

std::string lowered(const std::string& s) {
  std::string out = s;
  for (char& c : out) c = char(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

int externalStructureIndex(const StructureSet& set) {
  const auto& structures = set.structures;
  for (std::size_t i = 0; i < structures.size(); ++i)
    if (structures[i].kind == StructureKind::External && hasMask(structures[i])) return int(i);
  // Files that leave the interpreted type empty (or call the outline ORGAN) still name it so.
  for (const char* name : {"body", "external", "skin", "outline"})
    for (std::size_t i = 0; i < structures.size(); ++i)
      if (lowered(structures[i].name) == name && hasMask(structures[i])) return int(i);
  return -1;
}

const Mask* doseClipMask(const PatientScene& scene, bool clipToExternal) {
  if (!clipToExternal) return nullptr;
  // Same structures in the same order as patient(), masks on the display grid.
  const StructureSet& set = scene.displayPatient().structures;
  const int index = externalStructureIndex(set);
  return index < 0 ? nullptr : &set.structures[std::size_t(index)].mask;
}

Mask maskOnGrid(const Mask& mask, const Grid& grid) {
  Mask out(grid, 0);
  const Grid& mg = mask.grid;
  if (grid.empty() || mg.empty() || mask.data.size() != mg.voxelCount()) return out;
  // Target index -> mask index is affine: base + i * di + j * dj + k * dk.
  const Vec3 base = mg.worldToIndex(grid.indexToWorld(Vec3{0, 0, 0}));
  const Vec3 di = mg.worldToIndex(grid.indexToWorld(Vec3{1, 0, 0})) - base;
  const Vec3 dj = mg.worldToIndex(grid.indexToWorld(Vec3{0, 1, 0})) - base;
  const Vec3 dk = mg.worldToIndex(grid.indexToWorld(Vec3{0, 0, 1})) - base;
  std::size_t n = 0;
  for (int k = 0; k < grid.dims[2]; ++k)
    for (int j = 0; j < grid.dims[1]; ++j) {
      const Vec3 row = base + dj * double(j) + dk * double(k);
      for (int i = 0; i < grid.dims[0]; ++i, ++n) {
        const Vec3 p = row + di * double(i);
        const int a = int(std::floor(p.x + 0.5)), b = int(std::floor(p.y + 0.5)),
                  c = int(std::floor(p.z + 0.5));
        if (mg.containsIndex(a, b, c)) out.data[n] = mask.data[mg.linearIndex(a, b, c)];
      }
    }
  return out;
}

}  // namespace penumbra::gui
