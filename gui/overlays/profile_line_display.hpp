#pragma once
/// The line profile's segment (ProfileModel) on the slice views of its orientation while they
/// show the slice it was drawn on: a white line (visible on dose washes, gamma maps and CT
/// alike) with a dot at its start, where the Profile panel's distance axis begins. Views of
/// another orientation or slice show nothing: the profile lies in one plane.
#include <vtkSmartPointer.h>

#include "gui/overlays/slice_overlay.hpp"

class vtkActor;
class vtkPolyData;

namespace penumbra::gui {

class ProfileModel;

class ProfileLineDisplay : public SliceOverlay {
  Q_OBJECT
public:
  ProfileLineDisplay(vtkRenderer* renderer, const ViewState* state, SliceOrientation orientation,
                     const ProfileModel* profile, QObject* parent = nullptr);
  ~ProfileLineDisplay() override;

  bool isShowing() const;

private:
  void rebuild();

  const ProfileModel* profile_;
  vtkSmartPointer<vtkPolyData> line_, dot_;
  vtkSmartPointer<vtkActor> lineActor_, dotActor_;
};

}  // namespace penumbra::gui
