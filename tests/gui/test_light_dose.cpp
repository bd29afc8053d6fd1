// Light-dose panel (issue 6, item 5): MCML from the GUI. Opens the panel from Tools > Light dose
// (MCML)..., checks the layer validation, opens tests/mcml/data/skin_633nm.mci (two runs: the
// five-layer skin model at 633 nm of Tuchin 1997, Table 1, on Lo et al.'s 256 x 256 grid), runs
// 2e4 packets on the CPU as a job and checks the fluence map (finite, positive in the tissue,
// falling with depth on the axis), the isofluence lines at Lo et al.'s Figure 6 levels, the
// Rd(r) and A(z) plots and the summary (Rsp = Fresnel at n 1 -> 1.5, the energy balance);
// a second run cancelled at once ends Cancelled with the first result kept; Save .mco writes
// MCML's sections and an InParm block that the .mci reader reads back; a malformed .mci gives
// an error naming the line and leaves the panel as it was.
//
// With PENUMBRA_LIGHT_DOSE_SCREENSHOT=FILE (and optionally PENUMBRA_LIGHT_DOSE_PACKETS, default
// 1e6) it also runs the skin model from the built-in defaults and saves the panel as FILE
// (docs/images/light-dose-panel.png).
#include <cmath>
#include <memory>

#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QDir>
#include <QDockWidget>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QLineSeries>
#include <QMessageBox>
#include <QPushButton>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>

#include "core/device.hpp"
#include "gui/jobs/job_runner.hpp"
#include "gui/light/fluence_map_view.hpp"
#include "gui/light/light_dose_controller.hpp"
#include "gui/light/light_dose_panel.hpp"
#include "gui/shell/main_window.hpp"
#include "gui/shell/planning_workspace.hpp"
#include "gui_test_support.hpp"
#include "mcml/mcml_files.hpp"

using namespace penumbra;
using namespace penumbra::gui;
using penumbra::test::find;

namespace {

constexpr int kJobTimeoutMs = 300000;

QString mciPath() { return QStringLiteral(PENUMBRA_SOURCE_DIR "/tests/mcml/data/skin_633nm.mci"); }

std::vector<QString> tableTexts(QTableWidget* t) {
  std::vector<QString> out;
  for (int r = 0; r < t->rowCount(); ++r)
    for (int c = 0; c < t->columnCount(); ++c)
      out.push_back(t->item(r, c) ? t->item(r, c)->text() : QString());
  return out;
}

double summaryValue(QTableWidget* t, int row) {
  return t->item(row, 0)->data(Qt::UserRole).toDouble();
}

}  // namespace

class LightDoseTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    window_ = std::make_unique<MainWindow>();
    window_->show();
    QVERIFY(QTest::qWaitForWindowExposed(window_.get()));
    auto* action = find<QAction>(window_.get(), "actionLightDose");
    QVERIFY(action);
    action->trigger();
    dock_ = find<QDockWidget>(window_.get(), "lightDoseDock");
    QVERIFY(dock_);
    QVERIFY(dock_->isVisible());
    QVERIFY(QTest::qWaitForWindowExposed(dock_));
    panel_ = find<LightDosePanel>(window_.get(), "lightDosePanel");
    QVERIFY(panel_);
    jobs_ = window_->planning()->jobs();
  }

  void defaultsAreTheSkinModel() {
    auto* layers = find<QTableWidget>(panel_, "layerTable");
    QVERIFY(layers);
    QCOMPARE(layers->rowCount(), 5);
    // Tuchin 1997, Table 1, 633 nm: epidermis n 1.5, mua 4.3, mus 107, g 0.79, d 0.01 cm.
    QCOMPARE(layers->item(0, 0)->text().toDouble(), 1.5);
    QCOMPARE(layers->item(0, 2)->text().toDouble(), 107.0);
    QCOMPARE(layers->item(4, 1)->text().toDouble(), 3.4);
    auto* tally = find<QComboBox>(panel_, "tallyCombo");
    QVERIFY(tally);
    QCOMPARE(tally->count(), int(mcml::allTallyMethods().size()));
  }

  void cudaAbsenceIsExplained() {
    auto* backend = find<QComboBox>(panel_, "lightBackendCombo");
    auto* note = find<QLabel>(panel_, "backendNoteLabel");
    QVERIFY(backend && note);
    backend->setCurrentIndex(backend->findData(int(Backend::Cuda)));
    std::string why;
    if (!builtWithCuda() || queryCudaDevices(&why).empty()) {
      QVERIFY(note->isVisible());
      QVERIFY2(note->text().contains("CPU"), qPrintable(note->text()));
    } else {
      QVERIFY(!note->isVisible());
    }
    backend->setCurrentIndex(backend->findData(int(Backend::Auto)));
  }

  void isolineOfLinearFieldIsExact() {
    // Linear interpolation along cell edges reproduces the iso-line of a linear field exactly.
    const int nu = 10, nv = 8;
    std::vector<double> f(std::size_t(nu) * nv);
    for (int u = 0; u < nu; ++u)
      for (int v = 0; v < nv; ++v) f[std::size_t(u) * nv + v] = 0.5 * u + 0.25 * v;
    const auto segs = scalarIsoline(f, nu, nv, 2.1);
    QVERIFY(segs.size() >= 4);
    for (const Segment2& s : segs) {
      QVERIFY(std::abs(0.5 * s.u0 + 0.25 * s.v0 - 2.1) < 1e-5);
      QVERIFY(std::abs(0.5 * s.u1 + 0.25 * s.v1 - 2.1) < 1e-5);
    }
    QVERIFY(scalarIsoline(f, nu, nv, 100).empty());
    QVERIFY(scalarIsoline(f, nu, nv, -1).empty());
  }

  void badLayerValuesAreRefused() {
    auto* layers = find<QTableWidget>(panel_, "layerTable");
    auto* status = find<QLabel>(panel_, "lightStatusLabel");
    QVERIFY(layers && status);
    QSignalSpy submitted(jobs_, &JobRunner::jobSubmitted);
    layers->item(1, 2)->setText("1e");
    QVERIFY(panel_->run() == nullptr);
    QVERIFY2(status->text().contains("Layer 2") && status->text().contains("not a number"),
             qPrintable(status->text()));
    layers->item(1, 2)->setText("187");
    layers->item(2, 3)->setText("1.2");  // g outside (-1, 1): the engine's own validation
    QVERIFY(panel_->run() == nullptr);
    QVERIFY2(status->text().contains("layer 3") && status->text().contains("g must lie"),
             qPrintable(status->text()));
    layers->item(2, 3)->setText("0.82");
    find<QLineEdit>(panel_, "packetsEdit")->setText("12.5");
    QVERIFY(panel_->run() == nullptr);
    QVERIFY2(status->text().contains("Packets"), qPrintable(status->text()));
    QCOMPARE(submitted.count(), 0);
  }

  void opensMciWithTwoRuns() {
    QVERIFY(panel_->openMci(mciPath()));
    auto* runs = find<QComboBox>(panel_, "mciRunCombo");
    auto* packets = find<QLineEdit>(panel_, "packetsEdit");
    QVERIFY(runs && packets);
    QCOMPARE(runs->count(), 2);
    QCOMPARE(runs->currentIndex(), 0);
    QCOMPARE(packets->text(), QString("100000"));
    panel_->selectMciRun(1);
    QCOMPARE(packets->text(), QString("10000"));
    panel_->selectMciRun(0);
    QCOMPARE(packets->text(), QString("100000"));
    QCOMPARE(find<QTableWidget>(panel_, "layerTable")->rowCount(), 5);
  }

  void runsSkinModelOnCpu() {
    find<QLineEdit>(panel_, "packetsEdit")->setText("2e4");
    auto* backend = find<QComboBox>(panel_, "lightBackendCombo");
    QVERIFY(backend);
    backend->setCurrentIndex(backend->findData(int(Backend::Cpu)));
    auto* runButton = find<QPushButton>(panel_, "runLightButton");
    QVERIFY(runButton && runButton->isEnabled());
    QSignalSpy submitted(jobs_, &JobRunner::jobSubmitted);
    QTest::mouseClick(runButton, Qt::LeftButton);
    QCOMPARE(submitted.count(), 1);
    auto* job = submitted.first().first().value<Job*>();
    QVERIFY(job == panel_->controller()->job());
    QSignalSpy finished(job, &Job::finished);
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, kJobTimeoutMs);
    QCOMPARE(job->state(), Job::State::Done);
    const auto result = panel_->controller()->result();
    QVERIFY(result);
    QCOMPARE(result->run.config.packets, std::uint64_t(20000));
    QCOMPARE(result->result.backend, Backend::Cpu);

    // The map: the grid less MCML's overflow bin in r, down to the bottom of the tissue (0.2 cm
    // thick, 100 bins of 0.002 cm); finite and non-negative everywhere, positive on the axis.
    FluenceMapView* map = panel_->fluenceMap();
    QVERIFY(map->hasData());
    QCOMPARE(map->drawnRadialBins(), 255);
    QCOMPARE(map->drawnDepthBins(), 100);
    for (int u = 0; u < map->drawnRadialBins(); ++u)
      for (int v = 0; v < map->drawnDepthBins(); ++v)
        QVERIFY(std::isfinite(map->value(u, v)) && map->value(u, v) >= 0);
    // Fluence near the axis (r < 0.05 cm) averaged over depth windows of 0.02 cm falls with
    // depth below the sub-surface maximum (light diffusion: e-fold over 1/mu_eff ~ 0.06 cm).
    auto axisMean = [&](double z0) {
      double s = 0;
      int n = 0;
      for (int u = 0; u < 5; ++u)
        for (int v = int(z0 / 0.002); v < int((z0 + 0.02) / 0.002); ++v, ++n) s += map->value(u, v);
      return s / n;
    };
    const double f02 = axisMean(0.02), f06 = axisMean(0.06), f10 = axisMean(0.10),
                 f15 = axisMean(0.15);
    qInfo(
        "axis fluence (r < 0.05 cm) at z 0.02-0.04: %.4g, 0.06-0.08: %.4g, 0.10-0.12: %.4g, "
        "0.15-0.17: %.4g cm^-2",
        f02, f06, f10, f15);
    QVERIFY(f02 > 0 && f15 > 0);
    QVERIFY(f02 > f06 && f06 > f10 && f10 > f15);
    for (int v = 0; v < 100; ++v)
      QVERIFY2(map->value(0, v) > 0 || map->value(1, v) > 0, qPrintable(QString::number(v)));

    // Isofluence lines at Lo et al.'s levels: a line for every level inside the data range.
    QCOMPARE(int(map->levels().size()), 6);
    double maxPhi = 0;
    for (int u = 0; u < map->drawnRadialBins(); ++u)
      for (int v = 0; v < map->drawnDepthBins(); ++v) maxPhi = std::max(maxPhi, map->value(u, v));
    int drawn = 0;
    for (int i = 0; i < int(map->levels().size()); ++i) {
      const double level = map->levels()[std::size_t(i)];
      qInfo("level %g cm^-2: %d segments", level, map->contourSegmentCount(i));
      if (level < maxPhi && level > map->colourMin()) QVERIFY(map->contourSegmentCount(i) > 0);
      if (level > maxPhi) QCOMPARE(map->contourSegmentCount(i), 0);
      drawn += map->contourSegmentCount(i) > 0;
    }
    QVERIFY(drawn >= 3);

    // Rd(r) and A(z): points on log axes, Rd falling from the entry point outwards.
    QLineSeries* rd = panel_->rdSeries();
    QVERIFY(rd->count() > 50);
    for (const QPointF& p : rd->points()) QVERIFY(p.y() > 0);
    QVERIFY(rd->at(0).y() > rd->at(rd->count() / 2).y());
    QVERIFY(panel_->azSeries()->count() > 50);

    // Summary: Rsp is Fresnel reflection at n 1 -> 1.5, ((1 - 1.5) / 2.5)^2 = 0.04. The sum
    // Rsp + Rd + A + Tt is exactly 1 plus the roulette gain (MCML's roulette conserves weight
    // only in expectation: 2.2e-7 here, -2.0e-8 with 1e6 packets, about 3e-5 / sqrt(packets)),
    // so that identity is checked to rounding and the sum itself against 1 to 1e-6.
    QTableWidget* summary = panel_->summaryTable();
    const double rsp = summaryValue(summary, LightDosePanel::kRsp);
    const double sum =
        summaryValue(summary, LightDosePanel::kRsp) + summaryValue(summary, LightDosePanel::kRd) +
        summaryValue(summary, LightDosePanel::kA) + summaryValue(summary, LightDosePanel::kTt);
    const double gain = summaryValue(summary, LightDosePanel::kRoulette);
    qInfo("Rsp %.6g Rd %.6g A %.6g Tt %.6g; sum - 1 = %.3g; roulette gain %.3g", rsp,
          summaryValue(summary, LightDosePanel::kRd), summaryValue(summary, LightDosePanel::kA),
          summaryValue(summary, LightDosePanel::kTt), sum - 1, gain);
    QVERIFY(std::abs(rsp - 0.04) < 1e-12);
    QCOMPARE(summaryValue(summary, LightDosePanel::kSum), sum);
    QVERIFY2(std::abs(sum - 1 - gain) < 1e-9, qPrintable(QString::number(sum - 1 - gain)));
    QVERIFY2(std::abs(sum - 1) < 1e-6, qPrintable(QString::number(sum - 1)));
    QVERIFY(summary->item(LightDosePanel::kRd, 1)->data(Qt::UserRole).toDouble() >
            0);                                                          // standard error
    QCOMPARE(summary->rowCount(), int(LightDosePanel::kLayerRows) + 5);  // A per layer
    QVERIFY(find<QPushButton>(panel_, "saveMcoButton")->isEnabled());
  }

  void contourLevelsAreEditable() {
    FluenceMapView* map = panel_->fluenceMap();
    QVERIFY(panel_->setContourLevels("10, 1"));
    QCOMPARE(int(map->levels().size()), 2);
    QVERIFY(map->contourSegmentCount(0) > 0 && map->contourSegmentCount(1) > 0);
    QVERIFY(!panel_->setContourLevels("10, x"));
    QCOMPARE(int(map->levels().size()), 2);
    QVERIFY(panel_->setContourLevels("1000, 100, 10, 1, 0.01, 1e-5"));
    QCOMPARE(int(map->levels().size()), 6);
  }

  void cancelledRunKeepsTheResult() {
    const auto before = panel_->controller()->result();
    QVERIFY(before);
    QSignalSpy submitted(jobs_, &JobRunner::jobSubmitted);
    QTest::mouseClick(find<QPushButton>(panel_, "runLightButton"), Qt::LeftButton);
    QCOMPARE(submitted.count(), 1);
    auto* job = submitted.first().first().value<Job*>();
    QSignalSpy finished(job, &Job::finished);
    auto* cancel = find<QPushButton>(panel_, "cancelLightButton");
    QVERIFY(cancel->isEnabled());
    QTest::mouseClick(cancel, Qt::LeftButton);
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, kJobTimeoutMs);
    QCOMPARE(job->state(), Job::State::Cancelled);
    QVERIFY(panel_->controller()->result() == before);
    QVERIFY(panel_->fluenceMap()->hasData());
    QVERIFY(find<QLabel>(panel_, "lightStatusLabel")->text().contains("previous result is kept"));
    QVERIFY(!cancel->isEnabled());
  }

  void savesMco() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path = dir.filePath("skin.mco");
    QVERIFY(panel_->saveMco(path));
    QFile f(path);
    QVERIFY(f.open(QIODevice::ReadOnly | QIODevice::Text));
    const QString text = QString::fromUtf8(f.readAll());
    for (const char* section :
         {"InParm", "RAT", "A_l", "A_z", "Rd_r", "Rd_a", "Tt_r", "Tt_a", "A_rz", "Rd_ra", "Tt_ra"})
      QVERIFY2(text.contains(QRegularExpression(QString("^%1\\b").arg(section),
                                                QRegularExpression::MultilineOption)),
               section);
    // The InParm block is a .mci run: read it back with the .mci reader.
    const QStringList lines = text.split('\n');
    QString mci = "1.0\n1\n";
    bool in = false;
    for (const QString& l : lines) {
      if (l.startsWith("RAT")) break;
      if (in) mci += l + '\n';
      if (l.startsWith("InParm")) in = true;
    }
    const auto runs = io::parseMci(mci.toStdString(), "saved InParm");
    QCOMPARE(int(runs.size()), 1);
    const auto& saved = panel_->controller()->result()->run;
    QCOMPARE(runs[0].config.packets, saved.config.packets);
    QCOMPARE(runs[0].config.nr, 256);
    QCOMPARE(int(runs[0].medium.layers.size()), 5);
    QCOMPARE(runs[0].medium.layers[3].mus, 187.0);
    // RAT: Rd as written (%-14.6G) matches the result.
    const int rat = lines.indexOf(QRegularExpression("^RAT.*"));
    QVERIFY(rat > 0);
    const double rdSaved =
        lines[rat + 2].split(QRegularExpression("\\s+"), Qt::SkipEmptyParts).first().toDouble();
    QVERIFY(std::abs(rdSaved - panel_->controller()->result()->result.Rd) < 1e-5 * rdSaved);

    // A folder that does not exist: an error, no file, the application keeps running.
    QVERIFY(!panel_->saveMco(dir.filePath("missing/skin.mco")));
    QVERIFY(!QFile::exists(dir.filePath("missing/skin.mco")));
    closeErrorBoxes();
  }

  void malformedMciKeepsState() {
    QTemporaryDir dir;
    const QString path = dir.filePath("bad.mci");
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Text));
    f.write("1.0\n1\nbad.mco A\n1000\n0.01 0.01\n10 10 5\n1\n1.0\n1.4 abc 100 0.9 0.1\n1.0\n");
    f.close();
    auto* layers = find<QTableWidget>(panel_, "layerTable");
    auto* runs = find<QComboBox>(panel_, "mciRunCombo");
    const auto before = tableTexts(layers);
    const int runCount = runs->count();
    const auto result = panel_->controller()->result();
    QVERIFY(!panel_->openMci(path));
    QMessageBox* box = nullptr;
    QTRY_VERIFY((box = panel_->findChild<QMessageBox*>("lightDoseErrorBox")) != nullptr);
    QVERIFY2(box->text().contains("bad.mci:9:") && box->text().contains("mua"),
             qPrintable(box->text()));
    QVERIFY(find<QLabel>(panel_, "lightStatusLabel")->text().contains(":9:"));
    QVERIFY(tableTexts(layers) == before);
    QCOMPARE(runs->count(), runCount);
    QVERIFY(panel_->controller()->result() == result);
    closeErrorBoxes();
    QVERIFY(!panel_->openMci(dir.filePath("absent.mci")));
    closeErrorBoxes();
  }

  void screenshot() {
    const QString file = qEnvironmentVariable("PENUMBRA_LIGHT_DOSE_SCREENSHOT");
    if (file.isEmpty()) QSKIP("set PENUMBRA_LIGHT_DOSE_SCREENSHOT=FILE to save a screenshot");
    panel_->resetToSkinModel();
    const QString packets = qEnvironmentVariable("PENUMBRA_LIGHT_DOSE_PACKETS", "1e6");
    find<QLineEdit>(panel_, "packetsEdit")->setText(packets);
    Job* job = panel_->run();
    QVERIFY(job);
    QSignalSpy finished(job, &Job::finished);
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, kJobTimeoutMs);
    QCOMPARE(job->state(), Job::State::Done);
    QApplication::processEvents();
    const QImage image = dock_->grab().toImage();
    QVERIFY(image.save(file));
    qInfo("saved %s (%dx%d)", qPrintable(file), image.width(), image.height());
  }

  void cleanupTestCase() {
    if (jobs_) jobs_->cancelAll();
    window_.reset();
  }

 private:
  void closeErrorBoxes() {
    for (QMessageBox* b : panel_->findChildren<QMessageBox*>("lightDoseErrorBox")) b->close();
    QTRY_VERIFY(panel_->findChildren<QMessageBox*>("lightDoseErrorBox").isEmpty());
  }

  std::unique_ptr<MainWindow> window_;
  QDockWidget* dock_ = nullptr;
  LightDosePanel* panel_ = nullptr;
  JobRunner* jobs_ = nullptr;
};

QTEST_MAIN(LightDoseTest)
#include "test_light_dose.moc"
