// Issue 12, items 5-7, on the real `penumbra` binary in batch mode (QProcess under a timeout, in
// the test's Xvfb display, with its own settings folder):
//  - a folder with two CT series used to hang on the series dialog (0 % CPU): it imports the
//    first, says so on stdout and exits 0 with the screenshot;
//  - a folder of garbage exits 1 with the reason on stderr;
//  - a folder with RT Dose and RT Structure Set but no CT exits 1 and suggests --open-dose;
//  - --open-dose on RayStation's plan (no prescription in it) says on stdout that the default
//    prescription is kept, and --window-size 1280x800 gives a 1280 x 800 screenshot;
//  - --demo-plan prints the optimised plan's target coverage: D95 >= 95 %, V107 < 1 %.
#include <QByteArray>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QImage>
#include <QProcess>
#include <QRandomGenerator>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

#include "dicom/synthetic_phantom.hpp"
#include "test_data.hpp"

using namespace penumbra;

namespace {

struct Run {
  bool finished = false;
  int exitCode = -1;
  QString out, err;
};

constexpr int kTimeoutMs = 300000;

}  // namespace

class BatchModeTest : public QObject {
  Q_OBJECT

private slots:
  void initTestCase() {
    QVERIFY2(QFileInfo::exists(PENUMBRA_APP), PENUMBRA_APP);
    QVERIFY(settings_.isValid());
  }

  void severalCtSeriesImportTheFirstAndSaySo() {
    QTemporaryDir dir;
    io::SyntheticPhantomSpec a;
    a.seriesDescription = "first series";
    io::writeSyntheticPhantom(dir.filePath("a").toStdString(), a);
    io::SyntheticPhantomSpec b;
    b.rows = b.columns = 32;
    b.slices = 16;
    b.seriesDescription = "second series";
    io::writeSyntheticPhantom(dir.filePath("b").toStdString(), b);
    const QString shot = dir.filePath("shot.png");
    const Run r = run({"--open", dir.path(), "--screenshot", shot});
    QVERIFY2(r.finished, "penumbra hung on a folder with two CT series");
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    QVERIFY2(r.out.contains(QRegularExpression("2 CT series in .*: importing the first")), qPrintable(r.out));
    QVERIFY2(r.out.contains("--series"), qPrintable(r.out));
    QVERIFY(QFileInfo::exists(shot));
  }

  void garbageExitsWithAMessage() {
    QTemporaryDir dir;
    for (int i = 0; i < 4; ++i) {
      QFile f(dir.filePath(QString("file%1.dcm").arg(i)));
      QVERIFY(f.open(QIODevice::WriteOnly));
      QByteArray bytes(4096 * (i + 1), '\0');
      for (auto& c : bytes) c = char(QRandomGenerator::global()->bounded(256));
      f.write(bytes);
    }
    QFile text(dir.filePath("notes.txt"));
    QVERIFY(text.open(QIODevice::WriteOnly));
    text.write("not DICOM\n");
    text.close();
    const Run r = run({"--open", dir.path(), "--screenshot", dir.filePath("shot.png")});
    QVERIFY2(r.finished, "penumbra hung on a folder of garbage");
    QCOMPARE(r.exitCode, 1);
    QVERIFY2(r.err.contains("No DICOM CT series found"), qPrintable(r.err));
    QVERIFY(!QFileInfo::exists(dir.filePath("shot.png")));
  }

  void doseWithoutCtSuggestsOpenDose() {
    if (!test::haveData(kImrt)) QSKIP("brain-srs-raystation not in the test data");
    QTemporaryDir dir;
    const Run r = run({"--open", imrt(), "--screenshot", dir.filePath("shot.png")});
    QVERIFY(r.finished);
    QCOMPARE(r.exitCode, 1);
    QVERIFY2(r.err.contains("RT Dose and RT Structure Set") && r.err.contains("--open-dose"), qPrintable(r.err));
  }

  void openDoseSaysWhichPrescriptionAndKeepsTheWindowSize() {
    if (!test::haveData(kImrt)) QSKIP("brain-srs-raystation not in the test data");
    QTemporaryDir dir;
    const QString shot = dir.filePath("dose.png");
    const Run r = run({"--open-dose", imrt(), "--window-size", "1280x800", "--screenshot", shot});
    QVERIFY(r.finished);
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    QVERIFY2(r.out.contains("No prescription for RD1.2.752") && r.out.contains("(kept)"), qPrintable(r.out));
    QVERIFY2(r.out.contains("(1280x800)"), qPrintable(r.out));
    QCOMPARE(QImage(shot).size(), QSize(1280, 800));
  }

  void demoPlanIsOptimised() {
    if (!test::haveData("phantoms/BOXPHANTOM")) QSKIP("BOXPHANTOM not in the test data");
    QTemporaryDir dir;
    const QString shot = dir.filePath("demo.png");
    const Run r = run({"--demo-plan", "--window-size", "1280x800", "--screenshot", shot});
    QVERIFY(r.finished);
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    const QRegularExpressionMatch m =
        QRegularExpression("plan quality: OuterTarget D95 ([0-9.]+) %, V95 ([0-9.]+) %, V107 ([0-9.]+) %").match(r.out);
    QVERIFY2(m.hasMatch(), qPrintable(r.out));
    qInfo("%s", qPrintable(m.captured(0)));
    QVERIFY2(m.captured(1).toDouble() >= 95.0, qPrintable(m.captured(0)));
    QVERIFY2(m.captured(3).toDouble() < 1.0, qPrintable(m.captured(0)));
    QCOMPARE(QImage(shot).size(), QSize(1280, 800));
  }

private:
  static constexpr const char* kImrt = "patients/brain-srs-raystation/imrt";
  static QString imrt() { return QString::fromStdString(test::dataPath(kImrt)); }

  /// Runs penumbra with `args`; kills it (finished = false) after kTimeoutMs.
  Run run(const QStringList& args) {
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("XDG_CONFIG_HOME", settings_.path());  // recent folders not in the user's settings
    env.insert("PENUMBRA_TEST_DATA", QString::fromStdString(test::testDataDir()));
    p.setProcessEnvironment(env);
    p.start(PENUMBRA_APP, args);
    Run r;
    if (!p.waitForStarted(30000)) {
      r.err = p.errorString();
      return r;
    }
    r.finished = p.waitForFinished(kTimeoutMs);
    if (!r.finished) {
      p.kill();
      p.waitForFinished(10000);
    }
    r.exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    r.out = QString::fromUtf8(p.readAllStandardOutput());
    r.err = QString::fromUtf8(p.readAllStandardError());
    qInfo("penumbra %s -> %s, exit %d\nstdout: %s\nstderr: %s", qPrintable(args.join(' ')),
          r.finished ? "finished" : "KILLED (timeout)", r.exitCode, qPrintable(r.out.trimmed()),
          qPrintable(r.err.trimmed()));
    return r;
  }

  QTemporaryDir settings_;
};

QTEST_GUILESS_MAIN(BatchModeTest)
#include "test_batch_mode.moc"
