#pragma once
/// Batch tasks of `penumbra` (screenshots, render and latency benchmarks) run against the real
/// main window once the case is on screen, then the application exits with their status.
///
///   --demo-plan        add a beam (gantry 90) on the target, generate spots, optimise their
///                      weights and compute the dose on the CPU (PlanningWorkspace::runDemoPlan),
///                      wait for every display (isodose surfaces included), print the target's
///                      D95 / V95 / V107 / Dmax
///   --screenshot FILE  the whole window;  --bev-screenshot FILE  the beam's-eye view dock;
///   --dvh-screenshot FILE / --profiling-screenshot FILE  the DVH / kernel profiling dock
///                      (floated and enlarged), once the demo plan's DVHs are computed
///   --compare-screenshot FILE  the first two dose sets compared (gamma 3 %/3 mm global), the
///                      views in the gamma map, the Compare dock raised (batch_compare.cpp)
///   --robustness-run   after the demo plan: the Robustness panel's evaluation (its default 21
///                      scenarios; --robustness-grid MM for a coarser dose grid), the table printed,
///                      the Robustness dock raised and the DVH bands drawn before the screenshots
///                      (batch_robustness.cpp)
///   --bench-render N   median render time of the axial view
///   --bench-latency    event-loop latency while a CPU dose job runs on the demo plan (a
///                      QTimer at 10 ms; latency = how late each tick fires), then cancel
///                      latency at several points of a second run
#include <chrono>
#include <functional>
#include <vector>

#include <QObject>
#include <QSize>
#include <QString>
#include <QTimer>

namespace penumbra::gui {

class MainWindow;

/// Measures how late a precise periodic QTimer fires: each tick's delay beyond the interval is
/// time the event loop could not serve events (ms).
class EventLoopProbe : public QObject {
  Q_OBJECT
public:
  explicit EventLoopProbe(int intervalMs = 10, QObject* parent = nullptr);
  void start();
  void stop();
  const std::vector<double>& latenciesMs() const { return samples_; }
  double medianMs() const;
  double maxMs() const;

private:
  QTimer timer_;
  int intervalMs_;
  std::chrono::steady_clock::time_point last_;
  std::vector<double> samples_;
};

struct BatchOptions {
  bool demoPlan = false;
  QString screenshot;
  QString bevScreenshot;
  QString dvhScreenshot;
  QString profilingScreenshot;
  QString compareScreenshot;
  /// The compare views' layout in the compare screenshot: "side-by-side" (A | B | map, the
  /// default), "swipe" or "checkerboard".
  QString compareLayout = "side-by-side";
  int benchRenders = 0;
  bool benchLatency = false;
  /// Two beams (gantry 0 and 90) on the target, spots, the Optimise panel's job with its
  /// defaults; prints one line (iterations/s, backend, spots, voxels, target D95/Dmax in % of
  /// the prescription) and/or saves the Optimise dock.
  bool benchOptimise = false;
  QString optimiseScreenshot;
  bool optimise() const { return benchOptimise || !optimiseScreenshot.isEmpty(); }
  /// Robustness of the demo plan before the screenshots; its dose grid [mm] (0: the plan's).
  bool robustnessRun = false;
  double robustnessGridMm = 0;
  bool any() const {
    return demoPlan || !screenshot.isEmpty() || !bevScreenshot.isEmpty() || !dvhScreenshot.isEmpty() ||
           !profilingScreenshot.isEmpty() || !compareScreenshot.isEmpty() || benchRenders > 0 || benchLatency ||
           optimise() || robustnessRun;
  }
  /// No option but demoPlan (the interactive demo, which does not exit).
  bool onlyDemoPlan() const {
    BatchOptions o = *this;
    o.demoPlan = false;
    return !o.any();
  }
  bool anyScreenshot() const {
    return !screenshot.isEmpty() || !bevScreenshot.isEmpty() || !dvhScreenshot.isEmpty() || !profilingScreenshot.isEmpty();
  }
};

class BatchRunner : public QObject {
  Q_OBJECT
public:
  BatchRunner(MainWindow* window, BatchOptions options, QObject* parent = nullptr);

  /// Starts when the scene is ready; emits done(exitCode) at the end.
  void onSceneReady();

signals:
  void done(int exitCode);

private:
  void afterPlan();
  /// Prints the target's D95, V95, V107 and Dmax on the current dose set ("plan quality: ...").
  void printPlanQuality();
  /// Calls `then` once no isodose surface is building and no DVH job is pending.
  void whenDisplaysIdle(std::function<void()> then);
  int grabDock(const char* dockName, const QString& file, QSize size, const char* what);
  int grabAndBench();
  void benchLatency();
  void runOptimise();
  void afterOptimise();
  /// --compare-screenshot (batch_compare.cpp).
  void runCompare();
  /// --robustness-run (batch_robustness.cpp): evaluates, prints the table, then `then`.
  void runRobustness(std::function<void()> then);
  void cancelRun(std::size_t which);

  MainWindow* window_;
  BatchOptions options_;
  EventLoopProbe* probe_ = nullptr;
  bool baselineDone_ = false;
  std::vector<double> cancelAt_{0.05, 0.3, 0.6, 0.9};
  std::vector<double> cancelMs_;
};

}  // namespace penumbra::gui
