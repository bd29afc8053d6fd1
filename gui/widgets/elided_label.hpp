#pragma once
/// A one-line label for names that may not fit (dose-set names in a 340 px dock): the whole
/// text when it fits, else the text elided in the middle to the label's width, with the whole
/// text always in the tooltip. The middle goes first because both ends tell names apart
/// ("Imported RD1.2.752...85245.dcm", "Plan 1 (CPU)" against "Plan 1 (CUDA)"). It never asks
/// for more width than it is given (horizontal size policy Ignored), so a long name cannot
/// widen its panel.
#include <QLabel>
#include <QString>

namespace penumbra::gui {

class ElidedLabel : public QLabel {
  Q_OBJECT
public:
  explicit ElidedLabel(const char* objectName, QWidget* parent = nullptr);

  /// The whole text (shown elided when it does not fit).
  void setFullText(const QString& text);
  const QString& fullText() const { return full_; }
  /// True when the label shows less than its whole text.
  bool isElided() const { return text() != full_; }

  QSize minimumSizeHint() const override;

protected:
  void resizeEvent(QResizeEvent* e) override;

private:
  void elideToWidth();

  QString full_;
};

}  // namespace penumbra::gui
