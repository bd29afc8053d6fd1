#pragma once
/// Help > About Penumbra ("aboutDialog"): version, how this binary was built (GUI, DICOM, case
/// files, CUDA), the GPU found at run time (or why none is used), the toolkit versions, and
/// where the data it uses comes from with its licence (the BOXPHANTOM demo case and the HU
/// calibration from matRad, the photon beam data from EGSnrc / OpenTPS / NIST).
#include <QString>

class QWidget;

namespace penumbra::gui {

/// The dialog's text (rich text), also for tests.
QString aboutText();
/// Shows the dialog (non-modal, deleted on close) and returns it.
QWidget* showAboutDialog(QWidget* parent);

}  // namespace penumbra::gui
