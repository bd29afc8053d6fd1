#include "gui/model/patient_scene.hpp"

#include <cmath>

#include <vtkImageData.h>
#include <vtkPointData.h>
#include <vtkShortArray.h>

#include "core/reorient.hpp"

namespace penumbra::gui {

std::shared_ptr<const Patient> makeDisplayPatient(std::shared_ptr<const Patient> patient) {
  AxisPermutation perm;
  if (!patient || !signedPermutationOf(patient->ct.grid.direction, perm) || perm.isIdentity())
    return patient;
  auto display = std::make_shared<Patient>();
  display->name = patient->name;
  display->id = patient->id;
  display->frameOfReferenceUid = patient->frameOfReferenceUid;
  display->ctSeriesUid = patient->ctSeriesUid;
  display->ctDescription = patient->ctDescription;
  display->ct = reorientToIdentity(patient->ct);
  const StructureSet& from = patient->structures;
  display->structures.label = from.label;
  display->structures.frameOfReferenceUid = from.frameOfReferenceUid;
  display->structures.structures.reserve(from.structures.size());
  for (const Structure& s : from.structures) {
    Structure d;
    d.roiNumber = s.roiNumber;
    d.name = s.name;
    d.color = s.color;
    d.interpretedType = s.interpretedType;
    d.kind = s.kind;
    d.contours = s.contours;
    if (!s.mask.empty()) d.mask = reorientToIdentity(s.mask);
    display->structures.structures.push_back(std::move(d));
  }
  return display;
}

PatientScene::PatientScene(std::shared_ptr<const Patient> patient)
    : patient_(std::move(patient)),
      display_(makeDisplayPatient(patient_)),
      ctImage_(vtkSmartPointer<vtkImageData>::New()) {
  const Grid& g = grid();
  ctImage_->SetDimensions(g.dims[0], g.dims[1], g.dims[2]);
  ctImage_->SetSpacing(g.spacing.x, g.spacing.y, g.spacing.z);
  ctImage_->SetOrigin(g.origin.x, g.origin.y, g.origin.z);
  auto scalars = vtkSmartPointer<vtkShortArray>::New();
  scalars->SetName("HU");
  // save = 1: VTK must not free the display Patient's buffer; display_ outlives ctImage_
  // users because every display holds this scene while it shows it.
  scalars->SetArray(const_cast<std::int16_t*>(display_->ct.data.data()),
                    static_cast<vtkIdType>(display_->ct.data.size()), 1);
  ctImage_->GetPointData()->SetScalars(scalars);
}

PatientScene::~PatientScene() = default;

vtkImageData* PatientScene::ctImage() const { return ctImage_; }

std::array<double, 3> PatientScene::displayPoint(Vec3 ijk) const {
  const Grid& g = grid();
  return {g.origin.x + ijk.x * g.spacing.x, g.origin.y + ijk.y * g.spacing.y,
          g.origin.z + ijk.z * g.spacing.z};
}

Vec3 PatientScene::indexOfDisplayPoint(const double p[3]) const {
  const Grid& g = grid();
  return {(p[0] - g.origin.x) / g.spacing.x, (p[1] - g.origin.y) / g.spacing.y,
          (p[2] - g.origin.z) / g.spacing.z};
}

Vec3 PatientScene::importIndexOf(Vec3 ijk) const {
  return patient_->ct.grid.worldToIndex(grid().indexToWorld(ijk));
}

bool PatientScene::huAt(Vec3 ijk, int& hu) const {
  const int i = int(std::lround(ijk.x)), j = int(std::lround(ijk.y)), k = int(std::lround(ijk.z));
  if (!grid().containsIndex(i, j, k)) return false;
  hu = display_->ct.at(i, j, k);
  return true;
}

Vec3 PatientScene::centreIndex() const {
  const Grid& g = grid();
  return {(g.dims[0] - 1) / 2.0, (g.dims[1] - 1) / 2.0, (g.dims[2] - 1) / 2.0};
}

}  // namespace penumbra::gui
