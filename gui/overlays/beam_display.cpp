#include "gui/overlays/beam_display.hpp"

#include <algorithm>
#include <cmath>

#include <vtkActor.h>
#include <vtkCellArray.h>
#include <vtkCellData.h>
#include <vtkPoints.h>
#include <vtkPolyData.h>
#include <vtkPolyDataMapper.h>
#include <vtkProperty.h>
#include <vtkRenderer.h>
#include <vtkUnsignedCharArray.h>

#include "proton/beam_geometry.hpp"

namespace penumbra::gui {

namespace {

/// Accumulates coloured line segments (display-frame points) into a polydata.
struct LineBuilder {
  vtkSmartPointer<vtkPoints> points = vtkSmartPointer<vtkPoints>::New();
  vtkSmartPointer<vtkCellArray> cells = vtkSmartPointer<vtkCellArray>::New();
  vtkSmartPointer<vtkUnsignedCharArray> colors = vtkSmartPointer<vtkUnsignedCharArray>::New();
  LineBuilder() { colors->SetNumberOfComponents(3); }
  void add(const std::array<double, 3>& a, const std::array<double, 3>& b, std::array<double, 3> c) {
    const vtkIdType ids[2] = {points->InsertNextPoint(a.data()), points->InsertNextPoint(b.data())};
    cells->InsertNextCell(2, ids);
    const unsigned char rgb[3] = {(unsigned char)(255 * c[0]), (unsigned char)(255 * c[1]),
                                  (unsigned char)(255 * c[2])};
    colors->InsertNextTypedTuple(rgb);
  }
  void into(vtkPolyData* pd, bool asVerts = false) {
    pd->SetPoints(points);
    if (asVerts) pd->SetVerts(cells);
    else pd->SetLines(cells);
    pd->GetCellData()->SetScalars(colors);
    pd->Modified();
  }
};

vtkSmartPointer<vtkActor> makeLineActor(vtkPolyData* pd, float width) {
  auto mapper = vtkSmartPointer<vtkPolyDataMapper>::New();
  mapper->SetInputData(pd);
  mapper->SetScalarModeToUseCellData();
  mapper->SetColorModeToDirectScalars();
  auto actor = vtkSmartPointer<vtkActor>::New();
  actor->SetMapper(mapper);
  actor->GetProperty()->SetLineWidth(width);
  actor->GetProperty()->SetPointSize(4);
  actor->GetProperty()->LightingOff();
  actor->PickableOff();
  return actor;
}

/// Half the diagonal of the display grid [mm]: how far beam lines reach beyond the isocentre.
double sceneRadius(const PatientScene& scene) {
  const Grid& g = scene.grid();
  double d2 = 0;
  for (int a = 0; a < 3; ++a) d2 += std::pow(g.dims[a] * g.spacing[a], 2);
  return 0.5 * std::sqrt(d2);
}

}  // namespace

std::array<double, 3> beamColor(int index) {
  static const std::array<double, 3> palette[] = {
      {1.0, 0.85, 0.2}, {0.3, 0.8, 1.0}, {1.0, 0.45, 0.8}, {0.6, 1.0, 0.4}, {1.0, 0.6, 0.3}};
  return palette[std::size_t(index) % (sizeof palette / sizeof palette[0])];
}

FieldExtent fieldExtent(const PlannedBeam& p) {
  if (p.isPhoton()) {
    const photon::PhotonBeam& b = p.photon.beam;
    FieldExtent e{b.x1Mm, b.x2Mm, b.y1Mm, b.y2Mm};
    if (b.aperture.empty()) return e;
    // The open field is the aperture clipped by the jaws.
    double lo[2] = {1e300, 1e300}, hi[2] = {-1e300, -1e300};
    for (const auto& poly : b.aperture)
      for (const auto& q : poly)
        for (int a = 0; a < 2; ++a) lo[a] = std::min(lo[a], q[a]), hi[a] = std::max(hi[a], q[a]);
    if (lo[0] > hi[0]) return e;
    const FieldExtent c{std::max(e.aMin, lo[0]), std::min(e.aMax, hi[0]), std::max(e.bMin, lo[1]),
                        std::min(e.bMax, hi[1])};
    return c.aMin < c.aMax && c.bMin < c.bMax ? c : e;
  }
  FieldExtent e;
  bool any = false;
  for (const auto& l : p.beam.layers)
    for (const auto& s : l.spots) {
      if (!any) e = {s.x, s.x, s.y, s.y};
      any = true;
      e.aMin = std::min(e.aMin, s.x), e.aMax = std::max(e.aMax, s.x);
      e.bMin = std::min(e.bMin, s.y), e.bMax = std::max(e.bMax, s.y);
    }
  if (!any && p.projection && p.projection->hitRays > 0) {
    const auto& pr = *p.projection;
    e = {pr.a0, pr.a0 + pr.spacingMm * (pr.nA - 1), pr.b0, pr.b0 + pr.spacingMm * (pr.nB - 1)};
  }
  return e;
}

BeamSliceDisplay::BeamSliceDisplay(vtkRenderer* renderer, const ViewState* state,
                                   SliceOrientation orientation, const PlanModel* plan,
                                   QObject* parent)
    : SliceOverlay(renderer, state, orientation, parent),
      plan_(plan),
      lines_(vtkSmartPointer<vtkPolyData>::New()),
      current_(vtkSmartPointer<vtkPolyData>::New()) {
  actor_ = makeLineActor(lines_, 1.5f);
  currentActor_ = makeLineActor(current_, 3.0f);
  renderer->AddActor(actor_);
  renderer->AddActor(currentActor_);
  connect(state, &ViewState::sceneChanged, this, &BeamSliceDisplay::rebuild);
  connect(state, &ViewState::crosshairChanged, this, [this] {
    if (this->state()->sliceIndex(this->orientation()) != shownSlice_) rebuild();
  });
  connect(plan, &PlanModel::planChanged, this, &BeamSliceDisplay::rebuild);
  connect(plan, &PlanModel::currentBeamChanged, this, &BeamSliceDisplay::rebuild);
}

BeamSliceDisplay::~BeamSliceDisplay() {
  removeViewProp(renderer(), actor_);
  removeViewProp(renderer(), currentActor_);
}

vtkPolyData* BeamSliceDisplay::lines() const { return lines_; }

void BeamSliceDisplay::rebuild() {
  const auto& scene = state()->scene();
  shownSlice_ = state()->sliceIndex(orientation());
  LineBuilder others, current;
  if (scene) {
    const Grid& g = scene->grid();
    const auto [ua, va] = planeAxes();
    // Orthogonal projection onto the slice: drop the normal coordinate (planePoint puts the
    // point on the current slice, lifted above the dose and contours).
    auto onSlice = [&](Vec3 lps) {
      const Vec3 ijk = g.worldToIndex(lps);
      return planePoint(ijk[ua], ijk[va], kLayerCrosshair);
    };
    const double reach = sceneRadius(*scene);
    for (int b = 0; b < plan_->beamCount(); ++b) {
      const PlannedBeam& p = plan_->beam(b);
      const proton::BeamFrame f = beamFrame(p);
      const auto color = beamColor(b);
      LineBuilder& out = b == plan_->currentBeam() ? current : others;
      const double d0 = std::max(1.0, f.sad - reach), d1 = f.sad + reach;
      out.add(onSlice(f.bevToPatient(0, 0, d0)), onSlice(f.bevToPatient(0, 0, d1)), color);
      const FieldExtent e = fieldExtent(p);
      const std::array<double, 3> dim{0.6 * color[0], 0.6 * color[1], 0.6 * color[2]};
      for (const auto& [a, bb] : {std::pair{e.aMin, 0.0}, std::pair{e.aMax, 0.0}, std::pair{0.0, e.bMin},
                                 std::pair{0.0, e.bMax}})
        out.add(onSlice(f.bevToPatient(a, bb, d0)), onSlice(f.bevToPatient(a, bb, d1)), dim);
      // Isocentre cross, 6 mm arms along the slice's in-plane axes.
      const Vec3 iso = g.worldToIndex(f.isocenter);
      const double du = 6 / g.spacing[ua], dv = 6 / g.spacing[va];
      out.add(planePoint(iso[ua] - du, iso[va], kLayerCrosshair),
              planePoint(iso[ua] + du, iso[va], kLayerCrosshair), color);
      out.add(planePoint(iso[ua], iso[va] - dv, kLayerCrosshair),
              planePoint(iso[ua], iso[va] + dv, kLayerCrosshair), color);
    }
  }
  others.into(lines_);
  current.into(current_);
  requestRender();
}

BeamDisplay3D::BeamDisplay3D(vtkRenderer* renderer, const ViewState* state, const PlanModel* plan,
                             QObject* parent)
    : QObject(parent),
      renderer_(renderer),
      state_(state),
      plan_(plan),
      lines_(vtkSmartPointer<vtkPolyData>::New()),
      spots_(vtkSmartPointer<vtkPolyData>::New()) {
  actor_ = makeLineActor(lines_, 2.0f);
  spotActor_ = makeLineActor(spots_, 1.0f);
  renderer->AddActor(actor_);
  renderer->AddActor(spotActor_);
  connect(state, &ViewState::sceneChanged, this, &BeamDisplay3D::rebuild);
  connect(plan, &PlanModel::planChanged, this, &BeamDisplay3D::rebuild);
}

BeamDisplay3D::~BeamDisplay3D() {
  removeViewProp(renderer_, actor_);
  removeViewProp(renderer_, spotActor_);
}

vtkPolyData* BeamDisplay3D::geometry() const { return lines_; }

void BeamDisplay3D::rebuild() {
  const auto& scene = state_->scene();
  LineBuilder lines;
  auto spotPoints = vtkSmartPointer<vtkPoints>::New();
  auto spotCells = vtkSmartPointer<vtkCellArray>::New();
  auto spotColors = vtkSmartPointer<vtkUnsignedCharArray>::New();
  spotColors->SetNumberOfComponents(3);
  if (scene) {
    auto display = [&](Vec3 lps) { return scene->displayPoint(scene->grid().worldToIndex(lps)); };
    for (int b = 0; b < plan_->beamCount(); ++b) {
      const PlannedBeam& p = plan_->beam(b);
      const proton::BeamFrame f = beamFrame(p);
      const auto color = beamColor(b);
      // Axis from a point 40 % of the way from the source (the full 2 m would shrink the
      // patient to a dot when the camera fits everything) to beyond the isocentre.
      const double dStart = 0.6 * f.sad, dEnd = f.sad + 0.5 * sceneRadius(*scene);
      lines.add(display(f.bevToPatient(0, 0, dStart)), display(f.bevToPatient(0, 0, dEnd)), color);
      const FieldExtent e = fieldExtent(p);
      const std::array<std::array<double, 2>, 4> corners{
          {{e.aMin, e.bMin}, {e.aMax, e.bMin}, {e.aMax, e.bMax}, {e.aMin, e.bMax}}};
      for (int c = 0; c < 4; ++c) {
        const auto& q = corners[std::size_t(c)];
        const auto& r = corners[std::size_t((c + 1) % 4)];
        lines.add(display(f.bevToPatient(q[0], q[1], dStart)), display(f.bevToPatient(q[0], q[1], f.sad)), color);
        lines.add(display(f.bevToPatient(q[0], q[1], f.sad)), display(f.bevToPatient(r[0], r[1], f.sad)), color);
      }
      // A photon beam's conformal aperture at the isocentre plane (the jaws are the pyramid).
      const std::array<double, 3> light{0.5 + 0.5 * color[0], 0.5 + 0.5 * color[1], 0.5 + 0.5 * color[2]};
      if (p.isPhoton())
        for (const auto& poly : p.photon.beam.aperture)
          for (std::size_t i = 0; i < poly.size(); ++i) {
            const auto& q = poly[i];
            const auto& r = poly[(i + 1) % poly.size()];
            lines.add(display(f.bevToPatient(q[0], q[1], f.sad)), display(f.bevToPatient(r[0], r[1], f.sad)), light);
          }
      const unsigned char rgb[3] = {(unsigned char)(255 * color[0]), (unsigned char)(255 * color[1]),
                                    (unsigned char)(255 * color[2])};
      for (const auto& l : p.beam.layers)
        for (const auto& s : l.spots) {
          const auto at = display(f.bevToPatient(s.x, s.y, f.sad));
          const vtkIdType id = spotPoints->InsertNextPoint(at.data());
          spotCells->InsertNextCell(1, &id);
          spotColors->InsertNextTypedTuple(rgb);
        }
    }
  }
  lines.into(lines_);
  spots_->SetPoints(spotPoints);
  spots_->SetVerts(spotCells);
  spots_->GetCellData()->SetScalars(spotColors);
  spots_->Modified();
  emit renderRequested();
}

}  // namespace penumbra::gui
