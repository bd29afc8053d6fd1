#include "gui/shell/about_dialog.hpp"

#include <string>
#include <vector>

#include <QApplication>
#include <QMessageBox>
#include <QSysInfo>
#include <vtkVersion.h>

#include "core/device.hpp"

namespace penumbra::gui {

namespace {

QString onOff(bool on) { return on ? QObject::tr("on") : QObject::tr("off"); }

QString gpuLine() {
  std::string why;
  const std::vector<DeviceInfo> devices = queryCudaDevices(&why);
  if (devices.empty())
    return QObject::tr("none used: %1 (every engine runs on its CPU path)").arg(QString::fromStdString(why).toHtmlEscaped());
  QStringList names;
  for (const auto& d : devices)
    names << QObject::tr("%1 (compute %2.%3, %4)")
                 .arg(QString::fromStdString(d.name).toHtmlEscaped())
                 .arg(d.computeMajor)
                 .arg(d.computeMinor)
                 .arg(QString::fromStdString(formatBytes(double(d.totalMemoryBytes))));
  return names.join(", ");
}

}  // namespace

QString aboutText() {
#ifdef PENUMBRA_HAVE_DICOM
  const bool dicom = true;
#else
  const bool dicom = false;
#endif
#ifdef PENUMBRA_HAVE_CASE_FILES
  const bool caseFiles = true;
#else
  const bool caseFiles = false;
#endif
  QString t;
  t += QObject::tr("<h3>Penumbra %1</h3>").arg(QApplication::applicationVersion().toHtmlEscaped());
  t += QObject::tr("<p>GPU dose-planning workstation: proton pencil-beam and photon collapsed-cone dose, "
                   "spot-weight optimisation, DVHs, MCML light dose. Not for clinical use.</p>");
  t += QObject::tr("<p><b>Build:</b> GUI on, DICOM %1, case files %2, CUDA %3<br>"
                   "<b>GPU:</b> %4<br>"
                   "<b>Qt</b> %5, <b>VTK</b> %6, %7</p>")
           .arg(onOff(dicom), onOff(caseFiles), onOff(builtWithCuda()), gpuLine(), QString::fromLatin1(qVersion()),
                QString::fromLatin1(vtkVersion::GetVTKVersion()), QSysInfo::prettyProductName().toHtmlEscaped());
  t += QObject::tr(
      "<p><b>Data it uses</b> (each file keeps its provenance header or README):</p><ul>"
      "<li>Demo case BOXPHANTOM and the HU to electron-density / stopping-power calibration: matRad "
      "(github.com/e0404/matRad), BSD 3-Clause, &copy; the matRad development team, DKFZ.</li>"
      "<li>Photon 6 MV beam: Mohan et al. (1985) spectrum as distributed with EGSnrc (AGPL-3.0); Mackie "
      "et al. (1988) point kernels as distributed with OpenTPS / WiscPlan (GPL-2.0); water attenuation "
      "from NIST SRD 126 (Hubbell &amp; Seltzer, U.S. government work).</li>"
      "<li>Proton beam model: generic numbers written for Penumbra (resources/beam), not a machine's "
      "commissioning data; range-energy fits to NIST PSTAR (SRD 124).</li>"
      "<li>Light dose: the default five-layer skin model at 633 nm from Tuchin (1997), published values.</li>"
      "</ul>");
  return t;
}

QWidget* showAboutDialog(QWidget* parent) {
  auto* box = new QMessageBox(QMessageBox::NoIcon, QObject::tr("About Penumbra"), aboutText(), QMessageBox::Ok, parent);
  box->setObjectName("aboutDialog");
  box->setTextFormat(Qt::RichText);
  box->setAttribute(Qt::WA_DeleteOnClose);
  box->setModal(false);
  box->show();
  return box;
}

}  // namespace penumbra::gui
