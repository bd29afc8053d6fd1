// penumbra: the desktop application.
//   penumbra [--open DIR [--series KEY]] [--no-demo | --synthetic-demo] [--screenshot FILE]
//            [--bench-render N]
// Without --open and --no-demo the BOXPHANTOM demo case is opened at start (app_paths.hpp).
// --screenshot and --bench-render wait until the case is imported and all views (3D surfaces
// included) are on screen, do their work, and exit: 0 on success, non-zero on failure.
#include <cstdio>

#include <QApplication>
#include <QCommandLineParser>
#include <QImage>
#include <QTimer>

#include "main_window.hpp"
#include "slice_view.hpp"
#include "vtk_view.hpp"

using penumbra::gui::MainWindow;
using penumbra::gui::SliceOrientation;

namespace {

int runBatchTasks(MainWindow& w, const QString& screenshot, int benchRenders) {
  if (benchRenders > 0) {
    const QSize px = w.sliceView(SliceOrientation::Axial)->framebufferSizePx();
    const double still = w.benchmarkSliceRender(SliceOrientation::Axial, benchRenders, false);
    const double scroll = w.benchmarkSliceRender(SliceOrientation::Axial, benchRenders, true);
    if (still < 0 || scroll < 0) {
      std::fprintf(stderr, "penumbra: --bench-render: the axial view could not render\n");
      return 4;
    }
    std::printf("render axial slice view: median %.3f ms over %d renders (%dx%d px)\n", still,
                benchRenders, px.width(), px.height());
    std::printf("render axial slice view with slice change: median %.3f ms over %d renders "
                "(%dx%d px)\n",
                scroll, benchRenders, px.width(), px.height());
    std::fflush(stdout);
  }
  if (!screenshot.isEmpty()) {
    const QImage image = w.grabWindowImage();
    if (image.isNull() || !image.save(screenshot)) {
      std::fprintf(stderr, "penumbra: could not save the screenshot to %s\n", qPrintable(screenshot));
      return 5;
    }
    std::printf("screenshot saved to %s (%dx%d)\n", qPrintable(screenshot), image.width(), image.height());
  }
  return 0;
}

}  // namespace

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
  const QCommandLineOption seriesOpt("series", "CT series key to import from --open.", "KEY");
  const QCommandLineOption noDemoOpt("no-demo", "Do not open the demo case at start.");
  const QCommandLineOption synthOpt("synthetic-demo",
                                    "Open the generated synthetic phantom instead of BOXPHANTOM.");
  const QCommandLineOption shotOpt("screenshot", "Save a PNG of the main window and exit.", "FILE");
  const QCommandLineOption benchOpt("bench-render",
                                    "Render the axial slice view N times, print the median ms, exit.", "N");
  parser.addOptions({openOpt, seriesOpt, noDemoOpt, synthOpt, shotOpt, benchOpt});
  parser.process(app);

  const QString screenshot = parser.value(shotOpt);
  const int benchRenders = parser.isSet(benchOpt) ? parser.value(benchOpt).toInt() : 0;
  if (parser.isSet(benchOpt) && benchRenders <= 0) {
    std::fprintf(stderr, "penumbra: --bench-render needs a positive count\n");
    return 2;
  }
  const bool batch = !screenshot.isEmpty() || benchRenders > 0;

  MainWindow w;
  w.show();

  if (batch) {
    QObject::connect(&w, &MainWindow::sceneReady, &app, [&] {
      // Let the first frames of every view be painted before grabbing or timing.
      QTimer::singleShot(100, &app, [&] { app.exit(runBatchTasks(w, screenshot, benchRenders)); });
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

  bool started = false;
  if (parser.isSet(openOpt)) {
    started = w.openFolder(parser.value(openOpt), parser.value(seriesOpt), MainWindow::ImportConfirm::Auto);
  } else if (parser.isSet(synthOpt)) {
    started = w.openSyntheticDemoCase();
  } else if (!parser.isSet(noDemoOpt)) {
    started = w.openDemoCase();
  }
  if (batch && !started) {
    std::fprintf(stderr, "penumbra: nothing to open for --screenshot/--bench-render "
                         "(--no-demo given or no demo case found; use --open DIR)\n");
    return 1;
  }
  return app.exec();
}
