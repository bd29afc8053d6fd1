// penumbra: the desktop application.
//   penumbra [--open DIR [--series KEY] | --open-dose DIR] [--no-demo | --synthetic-demo] [--demo-plan]
//            [--screenshot FILE] [--bev-screenshot FILE] [--dvh-screenshot FILE]
//            [--profiling-screenshot FILE] [--bench-render N] [--bench-latency] [--window-size WxH]
//            [--bench-optimise] [--optimise-screenshot FILE] [--compare-screenshot FILE]
//            [--compare-layout side-by-side|swipe|checkerboard] [--robustness-run [--robustness-grid MM]]
// Without --open and --no-demo the BOXPHANTOM demo case is opened at start (app_paths.hpp).
// The batch options wait until the case is imported and all views (3D surfaces included) are
// on screen, do their work (gui/batch_runner.hpp), and exit: 0 on success, non-zero on failure.
// Batch runs never wait on a dialog (MainWindow::setBatchMode): a folder with several CT series
// imports the first (said on stdout; --series picks another), a folder that cannot be opened
// exits 1 with the reason on stderr, and an imported dose without a prescription in its RT Plan
// keeps the default one (said on stdout).
#include <cstdio>

#include <QApplication>
#include <QCommandLineParser>
#include <QTimer>

#include "gui/shell/batch_runner.hpp"
#include "gui/shell/main_window.hpp"
#include "gui/shell/plan_file_actions.hpp"
#include "gui/shell/planning_workspace.hpp"
#include "gui/views/vtk_view.hpp"

using penumbra::gui::MainWindow;

int main(int argc, char** argv) {
  penumbra::gui::VtkView::setDefaultSurfaceFormat();  // before QApplication (PLATFORM.md)
  QApplication app(argc, argv);
  QApplication::setOrganizationName("Penumbra");
  QApplication::setApplicationName("penumbra");
  QApplication::setApplicationVersion("0.1.0");

  QCommandLineParser parser;
  parser.setApplicationDescription("Penumbra: GPU radiotherapy dose planning workstation");
  parser.addHelpOption();
  parser.addVersionOption();
  const QCommandLineOption openOpt("open", "Open the DICOM folder DIR at start.", "DIR");
  const QCommandLineOption doseOpt("open-dose",
                                   "Open the RT Doses and RT Structure Set of DIR without CT (blank image on the "
                                   "dose grid) at start.",
                                   "DIR");
  const QCommandLineOption seriesOpt("series", "CT series key to import from --open.", "KEY");
  const QCommandLineOption noDemoOpt("no-demo", "Do not open the demo case at start.");
  const QCommandLineOption synthOpt("synthetic-demo",
                                    "Open the generated synthetic phantom instead of BOXPHANTOM.");
  const QCommandLineOption shotOpt("screenshot", "Save a PNG of the main window and exit.", "FILE");
  const QCommandLineOption benchOpt("bench-render",
                                    "Render the axial slice view N times, print the median ms, exit.", "N");
  const QCommandLineOption planOpt("demo-plan",
                                   "Add a beam at gantry 90 on the target, generate spots, optimise their "
                                   "weights and compute the dose on the CPU. With --screenshot (or another "
                                   "output option) print the target's D95, V95, V107 and Dmax before it; "
                                   "alone, keep the window open.");
  const QCommandLineOption bevOpt("bev-screenshot", "Save a PNG of the beam's-eye view dock and exit.", "FILE");
  const QCommandLineOption dvhOpt("dvh-screenshot",
                                  "Save a PNG of the DVH dock (after the demo plan's DVHs) and exit.", "FILE");
  const QCommandLineOption profOpt("profiling-screenshot",
                                   "Save a PNG of the kernel profiling dock (after the demo plan) and exit.", "FILE");
  const QCommandLineOption latencyOpt("bench-latency",
                                      "Print the event-loop latency during a CPU dose job on the demo "
                                      "plan, and the cancel latency, then exit.");
  const QCommandLineOption benchOptOpt("bench-optimise",
                                       "Two beams (gantry 0 and 90) on the target, spots, spot-weight "
                                       "optimisation with the panel's defaults; print iterations/s, backend, "
                                       "spots, voxels and target D95/Dmax, then exit.");
  const QCommandLineOption optShotOpt("optimise-screenshot",
                                      "Save a PNG of the Optimise dock after the optimisation (as "
                                      "--bench-optimise) and exit.",
                                      "FILE");
  const QCommandLineOption compareShotOpt("compare-screenshot",
                                          "Compare the first two dose sets (e.g. of --open-dose DIR) with gamma "
                                          "3 %/3 mm global, show the gamma map, save a PNG of the window and exit.",
                                          "FILE");
  const QCommandLineOption compareLayoutOpt("compare-layout",
                                            "The compare views in --compare-screenshot: side-by-side (A | B | map, "
                                            "the default), swipe or checkerboard (A and B on one view beside the map).",
                                            "NAME", "side-by-side");
  const QCommandLineOption robustOpt("robustness-run",
                                     "After the demo plan, evaluate its robustness in the Robustness panel (21 "
                                     "scenarios), print the table, raise the Robustness and DVH docks (bands), then "
                                     "take the screenshots.");
  const QCommandLineOption robustGridOpt("robustness-grid",
                                         "Dose grid of --robustness-run [mm] (default: the plan's).", "MM", "0");
  const QCommandLineOption sizeOpt("window-size", "Main window size, e.g. 1600x1000.", "WxH");
  parser.addOptions({sizeOpt, openOpt, doseOpt, seriesOpt, noDemoOpt, synthOpt, shotOpt, benchOpt, planOpt, bevOpt, dvhOpt, profOpt,
                     latencyOpt, benchOptOpt, optShotOpt, compareShotOpt, compareLayoutOpt, robustOpt, robustGridOpt});
  parser.process(app);

  penumbra::gui::BatchOptions options;
  options.screenshot = parser.value(shotOpt);
  options.bevScreenshot = parser.value(bevOpt);
  options.benchRenders = parser.isSet(benchOpt) ? parser.value(benchOpt).toInt() : 0;
  options.dvhScreenshot = parser.value(dvhOpt);
  options.profilingScreenshot = parser.value(profOpt);
  options.compareScreenshot = parser.value(compareShotOpt);
  options.compareLayout = parser.value(compareLayoutOpt);
  if (!QStringList{"side-by-side", "swipe", "checkerboard"}.contains(options.compareLayout)) {
    std::fprintf(stderr, "penumbra: --compare-layout takes side-by-side, swipe or checkerboard, not %s\n",
                 qPrintable(options.compareLayout));
    return 2;
  }
  options.robustnessRun = parser.isSet(robustOpt);
  bool gridOk = false;
  options.robustnessGridMm = parser.value(robustGridOpt).toDouble(&gridOk);
  if (!gridOk || options.robustnessGridMm < 0) {
    std::fprintf(stderr, "penumbra: --robustness-grid takes a dose grid spacing in mm (0: the plan's)\n");
    return 2;
  }
  // The panel screenshots need a plan: the demo plan, unless a dose was opened (--open-dose).
  options.demoPlan = parser.isSet(planOpt) || options.robustnessRun ||
                     (!parser.isSet(doseOpt) && (!options.bevScreenshot.isEmpty() || !options.dvhScreenshot.isEmpty() ||
                                                 !options.profilingScreenshot.isEmpty()));
  options.benchLatency = parser.isSet(latencyOpt);
  options.benchOptimise = parser.isSet(benchOptOpt);
  options.optimiseScreenshot = parser.value(optShotOpt);
  if (parser.isSet(benchOpt) && options.benchRenders <= 0) {
    std::fprintf(stderr, "penumbra: --bench-render needs a positive count\n");
    return 2;
  }
  // --demo-plan alone is the interactive demo (scripts/penumbra-demo): the optimised plan is
  // computed once the case is on screen and the window stays open. With an output option it is
  // part of the batch run.
  const bool batch = options.any() && !(options.demoPlan && options.onlyDemoPlan());

  MainWindow w;
  if (parser.isSet(sizeOpt)) {
    const QStringList wh = parser.value(sizeOpt).split('x');
    if (wh.size() == 2 && wh[0].toInt() > 0 && wh[1].toInt() > 0) w.resize(wh[0].toInt(), wh[1].toInt());
  }
  w.show();
  penumbra::gui::BatchRunner runner(&w, options);

  if (batch) {
    w.setBatchMode(true);
    auto print = [](const QString& text) {
      std::printf("%s\n", qPrintable(text));
      std::fflush(stdout);
    };
    QObject::connect(&w, &MainWindow::notice, &app, print);
    auto* files = w.planning()->fileActions();
    QObject::connect(files, &penumbra::gui::PlanFileActions::prescriptionResolved, &app,
                     [print](double, bool, const QString& text) { print(text); });
    QObject::connect(files, &penumbra::gui::PlanFileActions::failed, &app, [&](const QString& message) {
      std::fprintf(stderr, "penumbra: %s\n", qPrintable(message));
      app.exit(1);
    });
    QObject::connect(&runner, &penumbra::gui::BatchRunner::done, &app, [&](int code) { app.exit(code); });
    QObject::connect(&w, &MainWindow::sceneReady, &app, [&] {
      // Let the first frames of every view be painted before grabbing or timing.
      QTimer::singleShot(100, &app, [&] { runner.onSceneReady(); });
    });
    QObject::connect(&w, &MainWindow::importFailed, &app, [&](const QString& message) {
      std::fprintf(stderr, "penumbra: import failed: %s\n", qPrintable(message));
      app.exit(1);
    });
    QObject::connect(&w, &MainWindow::importCancelled, &app, [&] { app.exit(1); });
    QTimer::singleShot(600000, &app, [&] {
      std::fprintf(stderr, "penumbra: timed out waiting for the case to load\n");
      app.exit(3);
    });
  }

  if (options.demoPlan && !batch)
    QObject::connect(&w, &MainWindow::sceneReady, &app, [&w] { w.planning()->runDemoPlan(90); },
                     Qt::SingleShotConnection);

  bool started = false;
  if (parser.isSet(openOpt)) {
    started = w.openFolder(parser.value(openOpt), parser.value(seriesOpt), MainWindow::ImportConfirm::Auto);
  } else if (parser.isSet(doseOpt)) {
    started = w.planning()->fileActions()->openDoseWithoutCt(parser.value(doseOpt)) != nullptr;
  } else if (parser.isSet(synthOpt)) {
    started = w.openSyntheticDemoCase();
  } else if (!parser.isSet(noDemoOpt)) {
    started = w.openDemoCase();
  }
  if (batch && !started) {
    std::fprintf(stderr, "penumbra: nothing to open for the batch options "
                         "(--no-demo given or no demo case found; use --open DIR)\n");
    return 1;
  }
  return app.exec();
}
