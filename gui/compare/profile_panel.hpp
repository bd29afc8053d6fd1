#pragma once
/// Line profiles (dock "profileDock", widget "profilePanel"; issue 13, item 3): with the
/// Profile tool on ("profileToolButton", also the main toolbar's "actionProfileTool"), a left
/// drag on any slice view draws a segment (ProfileModel) and this chart plots the dose along
/// it against the distance from its start (mm): A and B of the current comparison (solid and
/// dashed) with their gamma on the right axis (a dot per sample, pass and fail in the gamma
/// map's colours, the threshold 1 dashed), or the current dose set alone when there is no
/// comparison, so the tool serves the planning views too. Doses are sampled trilinearly (as
/// the cursor read-out), gamma at the nearest reference voxel (as the gamma map).
#include <vector>

#include <QWidget>

#include "core/vec3.hpp"
#include "core/volume.hpp"

class QChart;
class QLabel;
class QLineSeries;
class QPushButton;
class QScatterSeries;
class QValueAxis;

namespace penumbra::gui {

class ComparisonModel;
class DoseSetStore;
class PatientScene;
class ProfileModel;
class ViewState;

/// Samples along a profile; NaN where a volume is absent, outside its grid or not evaluated.
struct ProfileSamples {
  std::vector<double> mm;  ///< distance from the start, mm
  std::vector<double> a, b, gamma;
};

/// `n` samples from display-grid index `start` to `end` (both included).
ProfileSamples sampleProfile(const PatientScene& scene, Vec3 start, Vec3 end, const Volume<float>* a,
                             const Volume<float>* b, const Volume<float>* gamma, int n);

class ProfilePanel : public QWidget {
  Q_OBJECT
public:
  static constexpr int kSamples = 241;

  ProfilePanel(ViewState* state, ProfileModel* profile, DoseSetStore* doseSets, ComparisonModel* comparison,
               QWidget* parent = nullptr);

  /// What is plotted now (empty without a line). For tests.
  const ProfileSamples& samples() const { return samples_; }
  QChart* chart() const { return chart_; }
  QLabel* statusLabel() const { return status_; }

signals:
  void refreshed();

private:
  void refresh();

  ViewState* state_;
  ProfileModel* profile_;
  DoseSetStore* doseSets_;
  ComparisonModel* comparison_;
  QPushButton* tool_ = nullptr;
  QLabel* status_ = nullptr;
  QChart* chart_ = nullptr;
  QValueAxis* axisX_ = nullptr;
  QValueAxis* axisDose_ = nullptr;
  QValueAxis* axisGamma_ = nullptr;
  QLineSeries* a_ = nullptr;
  QLineSeries* b_ = nullptr;
  QScatterSeries* pass_ = nullptr;
  QScatterSeries* fail_ = nullptr;
  QLineSeries* threshold_ = nullptr;
  ProfileSamples samples_;
};

}  // namespace penumbra::gui
