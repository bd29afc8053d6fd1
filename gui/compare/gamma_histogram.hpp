#pragma once
/// Histogram of the evaluated gamma values ("gammaHistogram", Qt Charts): the engine's fine
/// histogram (2000 bins over [0, cap]) merged into kBins bars, each bar split into its passing
/// (gamma <= 1, the cool colour of the gamma map) and failing part (the warm colour), with a
/// pass part that adds up to the engine's passing points (GammaStatistics::passedPoints), and a
/// dashed vertical line at gamma = 1 on a value axis 0..cap, so the threshold reads at a glance
/// whatever the cap. y: points (% of the evaluated points in the tooltip-free axis title).
#include <array>
#include <cstdint>
#include <vector>

#include <QWidget>

class QBarCategoryAxis;
class QBarSet;
class QChart;
class QChartView;
class QLineSeries;
class QStackedBarSeries;
class QValueAxis;

namespace penumbra::compare {
struct GammaStatistics;
}

namespace penumbra::gui {

class GammaHistogram : public QWidget {
  Q_OBJECT
public:
  static constexpr int kBins = 40;

  explicit GammaHistogram(QWidget* parent = nullptr);

  void setStatistics(const compare::GammaStatistics& stats, double cap);
  void clear();

  /// Points per bar, passing and failing part (kBins each; empty after clear()). For tests.
  const std::vector<double>& passCounts() const { return pass_; }
  const std::vector<double>& failCounts() const { return fail_; }
  QChart* chart() const { return chart_; }
  QChartView* chartView() const { return view_; }

private:
  QChart* chart_;
  QChartView* view_;
  QStackedBarSeries* bars_;
  QBarSet* passSet_;
  QBarSet* failSet_;
  QLineSeries* threshold_;
  QBarCategoryAxis* categories_;
  QValueAxis* axisX_;
  QValueAxis* axisY_;
  std::vector<double> pass_, fail_;
};

}  // namespace penumbra::gui
