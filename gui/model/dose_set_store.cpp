#include "gui/model/dose_set_store.hpp"

#include <algorithm>
#include <cmath>

namespace penumbra::gui {

DoseSetStore::DoseSetStore(QObject* parent) : QObject(parent) {}

std::shared_ptr<const DoseSet> DoseSetStore::at(int index) const {
  if (index < 0 || index >= count()) return nullptr;
  return sets_[std::size_t(index)];
}

int DoseSetStore::indexOfId(int id) const {
  for (int i = 0; i < count(); ++i)
    if (sets_[std::size_t(i)]->id == id) return i;
  return -1;
}

int DoseSetStore::add(DoseSet set) {
  set.id = nextId_++;
  if (set.maxGy <= 0) set.maxGy = maxDose(set.dose.dose);
  sets_.push_back(std::make_shared<const DoseSet>(std::move(set)));
  const int index = count() - 1;
  emit doseSetAdded(index);
  setCurrentIndex(index);
  return index;
}

void DoseSetStore::replace(int index, DoseSet set) {
  if (index < 0 || index >= count()) return;
  set.id = sets_[std::size_t(index)]->id;
  set.maxGy = maxDose(set.dose.dose);
  sets_[std::size_t(index)] = std::make_shared<const DoseSet>(std::move(set));
  emit doseSetChanged(index);
  if (index == current_) emit currentDoseSetChanged(index);
}

void DoseSetStore::remove(int index) {
  if (index < 0 || index >= count()) return;
  sets_.erase(sets_.begin() + index);
  emit doseSetRemoved(index);
  if (current_ >= count() || current_ == index) {
    current_ = -2;  // force the signal
    setCurrentIndex(count() - 1);
  } else if (current_ > index) {
    --current_;
  }
}

void DoseSetStore::clear() {
  while (count() > 0) remove(count() - 1);
}

void DoseSetStore::setCurrentIndex(int index) {
  if (index < 0 || index >= count()) index = -1;
  if (index == current_) return;
  current_ = index;
  emit currentDoseSetChanged(index);
}

double maxDose(const Volume<float>& dose) {
  if (dose.data.empty()) return 0;
  return double(*std::max_element(dose.data.begin(), dose.data.end()));
}

bool sampleDose(const Volume<float>& dose, Vec3 lps, double& gy) {
  const Grid& g = dose.grid;
  if (g.empty()) return false;
  const Vec3 f = g.worldToIndex(lps);
  double idx[3] = {f.x, f.y, f.z};
  int i0[3];
  double t[3];
  for (int a = 0; a < 3; ++a) {
    // Half a voxel outside the centres still counts (clamped): the voxel's own extent.
    if (idx[a] < -0.5 || idx[a] > g.dims[a] - 0.5) return false;
    const double c = std::clamp(idx[a], 0.0, double(g.dims[a] - 1));
    i0[a] = std::min(int(std::floor(c)), std::max(0, g.dims[a] - 2));
    t[a] = g.dims[a] > 1 ? c - i0[a] : 0.0;
    if (g.dims[a] == 1) i0[a] = 0;
  }
  double acc = 0;
  for (int c = 0; c < 8; ++c) {
    const int di = c & 1, dj = (c >> 1) & 1, dk = (c >> 2) & 1;
    const double w = (di ? t[0] : 1 - t[0]) * (dj ? t[1] : 1 - t[1]) * (dk ? t[2] : 1 - t[2]);
    if (w == 0) continue;
    const int i = std::min(i0[0] + di, g.dims[0] - 1), j = std::min(i0[1] + dj, g.dims[1] - 1),
              k = std::min(i0[2] + dk, g.dims[2] - 1);
    acc += w * dose.data[g.linearIndex(i, j, k)];
  }
  gy = acc;
  return true;
}

}  // namespace penumbra::gui
