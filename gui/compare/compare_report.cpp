#include "gui/compare/compare_report.hpp"

#include <algorithm>
#include <cmath>

#include <QDateTime>
#include <QPageLayout>
#include <QPageSize>
#include <QPainter>
#include <QPdfWriter>
#include <QSaveFile>

#include "gui/compare/compare_controller.hpp"
#include "gui/compare/compare_tables.hpp"
#include "gui/model/comparison_model.hpp"
#include "gui/model/dose_set_store.hpp"

namespace penumbra::gui {

namespace {

/// A top-to-bottom page writer: text lines, tables and pictures, a new page when one is full.
class PageFlow {
public:
  PageFlow(QPdfWriter& writer, QPainter& painter) : writer_(writer), p_(painter) {
    width_ = painter.viewport().width();
    height_ = painter.viewport().height();
  }

  void heading(const QString& text) {
    space(mm(3));
    line(text, 12, true);
  }
  void line(const QString& text, double points = 9.5, bool bold = false) {
    QFont f("DejaVu Sans");
    f.setPointSizeF(points);
    f.setBold(bold);
    p_.setFont(f);
    const QRect box(0, 0, width_, height_);
    const QRect need = p_.boundingRect(box, Qt::TextWordWrap, text);
    room(need.height());
    p_.drawText(QRect(0, y_, width_, need.height()), Qt::TextWordWrap, text);
    y_ += need.height();
  }
  /// Columns as fractions of the width; the first column left-aligned, the others right.
  void table(const QStringList& header, const std::vector<QStringList>& rows, const std::vector<double>& widths) {
    QFont f("DejaVu Sans");
    f.setPointSizeF(8.5);
    p_.setFont(f);
    const int h = QFontMetrics(f, &writer_).height() + mm(0.8);
    auto row = [&](const QStringList& cells, bool bold) {
      room(h);
      QFont rf = f;
      rf.setBold(bold);
      p_.setFont(rf);
      int x = 0;
      for (int c = 0; c < cells.size() && c < int(widths.size()); ++c) {
        const int w = int(widths[std::size_t(c)] * width_);
        const auto align = (c == 0 ? Qt::AlignLeft : Qt::AlignRight) | Qt::AlignVCenter;
        p_.drawText(QRect(x + mm(0.5), y_, w - mm(1), h), int(align), cells[c]);
        x += w;
      }
      y_ += h;
    };
    row(header, true);
    p_.drawLine(0, y_, width_, y_);
    for (const QStringList& r : rows) row(r, false);
  }
  /// A picture scaled to `fraction` of the width (and at most the page height).
  void picture(const QImage& image, double fraction, const QString& caption) {
    if (image.isNull()) return;
    int w = int(fraction * width_);
    int h = int(double(image.height()) / image.width() * w);
    if (h > height_ * 0.6) {
      h = int(height_ * 0.6);
      w = int(double(image.width()) / image.height() * h);
    }
    room(h + mm(6));
    p_.drawImage(QRect(0, y_, w, h), image);
    y_ += h;
    line(caption, 8.5);
  }
  void space(int px) { y_ += px; }
  int mm(double v) const { return int(std::lround(v / 25.4 * writer_.resolution())); }

private:
  void room(int h) {
    if (y_ + h <= height_ || y_ == 0) return;
    writer_.newPage();
    y_ = 0;
  }

  QPdfWriter& writer_;
  QPainter& p_;
  int width_ = 0, height_ = 0, y_ = 0;
};

QString provenance(const DoseSet& s) {
  QString text = QObject::tr("max %1 Gy").arg(s.maxGy, 0, 'f', 2);
  if (!s.dose.engine.empty()) text += QObject::tr(", %1").arg(QString::fromStdString(s.dose.engine));
  if (!s.dose.backend.empty()) text += QObject::tr(" (%1)").arg(QString::fromStdString(s.dose.backend));
  const auto& d = s.dose.grid().dims;
  const auto& sp = s.dose.grid().spacing;
  return text + QObject::tr(", grid %1 x %2 x %3 of %4 x %5 x %6 mm")
                    .arg(d[0]).arg(d[1]).arg(d[2])
                    .arg(sp.x, 0, 'g', 3).arg(sp.y, 0, 'g', 3).arg(sp.z, 0, 'g', 3);
}

}  // namespace

bool writeCompareReport(const QString& path, const CompareReportInput& in, QString* error) {
  if (!in.comparison || !in.comparison->result) {
    if (error) *error = QObject::tr("there is no comparison to report");
    return false;
  }
  const Comparison& c = *in.comparison;
  const compare::CompareResult& r = *c.result;
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly)) {
    if (error) *error = file.errorString();
    return false;
  }
  {
    QPdfWriter writer(&file);
    writer.setPageSize(QPageSize(QPageSize::A4));
    writer.setPageMargins(QMarginsF(15, 15, 15, 15), QPageLayout::Millimeter);
    writer.setResolution(300);
    writer.setTitle(QObject::tr("Dose comparison: %1").arg(ComparisonModel::criteriaText(c.criteria)));
    writer.setCreator(QObject::tr("Penumbra %1").arg(in.applicationVersion));
    QPainter painter(&writer);
    PageFlow flow(writer, painter);
    flow.line(QObject::tr("Dose comparison report"), 16, true);
    const QString app = in.applicationVersion.isEmpty() ? QObject::tr("Penumbra")
                                                        : QObject::tr("Penumbra %1").arg(in.applicationVersion);
    flow.line(QObject::tr("%1, %2").arg(app, QDateTime::currentDateTime().toString(Qt::ISODate)));
    flow.heading(QObject::tr("Patient"));
    flow.line(c.patientName.isEmpty() ? QObject::tr("(no name)") : c.patientName);
    flow.heading(QObject::tr("Dose sets"));
    flow.line(QObject::tr("A (reference): %1 - %2").arg(c.reference->name, provenance(*c.reference)));
    flow.line(QObject::tr("B (evaluated): %1 - %2").arg(c.evaluated->name, provenance(*c.evaluated)));
    flow.heading(QObject::tr("Criteria"));
    const auto& k = c.criteria;
    flow.line(QObject::tr("DD %1 % (%2), DTA %3 mm; DD and cut-off of %4 Gy (%5); cut-off %6 %; gamma cap %7; "
                          "search up to %8 mm; computed on %9 in %10 s")
                  .arg(k.dosePercent, 0, 'g', 3)
                  .arg(k.local ? QObject::tr("local") : QObject::tr("global"))
                  .arg(k.distanceMm, 0, 'g', 3)
                  .arg(r.normalisationGy, 0, 'f', 2)
                  .arg(QString::fromUtf8(compare::toString(k.normalisation)))
                  .arg(k.cutoffPercent, 0, 'g', 3)
                  .arg(k.gammaCap, 0, 'g', 3)
                  .arg(k.maxSearchMm > 0 ? k.maxSearchMm : k.gammaCap * k.distanceMm, 0, 'g', 3)
                  .arg(QString::fromStdString(r.device.empty() ? toString(r.backend) : r.device))
                  .arg(r.elapsedMs / 1000, 0, 'f', 1));
    flow.heading(QObject::tr("Result"));
    flow.line(passRateHeadline(k, r), 12, true);
    const auto& g = r.gammaStats;
    const auto& d = r.differenceStats;
    flow.line(QObject::tr("gamma mean %1, p50 %2, p95 %3, max %4; %5 reference points, %6 below the cut-off, "
                          "%7 outside B")
                  .arg(g.mean, 0, 'f', 2).arg(g.p50, 0, 'f', 2).arg(g.p95, 0, 'f', 2).arg(g.max, 0, 'f', 2)
                  .arg(groupedCount(r.referencePoints), groupedCount(r.belowCutoff), groupedCount(r.outsideEvaluated)));
    flow.line(QObject::tr("A - B: mean %1 Gy (sd %2), min %3 Gy, max %4 Gy; |A - B| <= DD at %5 % of the points")
                  .arg(d.meanGy, 0, 'f', 3).arg(d.sdGy, 0, 'f', 3).arg(d.minGy, 0, 'f', 2).arg(d.maxGy, 0, 'f', 2)
                  .arg(d.withinDosePercent, 0, 'f', 1));
    for (const auto& m : r.messages) flow.line(QString::fromStdString(m), 8.5);
    flow.space(flow.mm(2));
    flow.picture(in.histogram, 0.6, QObject::tr("Gamma histogram: pass (<= 1) and fail (> 1)"));
    if (!r.structures.empty()) {
      flow.heading(QObject::tr("Gamma pass rate per structure"));
      std::vector<QStringList> rows;
      for (const auto& s : r.structures)
        rows.push_back({QString::fromStdString(s.name), groupedCount(s.evaluatedPoints),
                        formatValue(s.passRatePercent, 1), formatValue(s.evaluatedPoints > 0 ? s.meanGamma : NAN, 2)});
      flow.table({QObject::tr("Structure"), QObject::tr("Points"), QObject::tr("Pass %"), QObject::tr("Mean gamma")},
                 rows, {0.46, 0.18, 0.18, 0.18});
    }
    if (!in.dvhRows.empty()) {
      flow.heading(QObject::tr("DVH: A against B"));
      std::vector<QStringList> rows;
      for (std::size_t i = 0; i < in.dvhRows.size(); ++i) {
        const DvhComparisonRow& row = in.dvhRows[i];
        const bool first = i == 0 || in.dvhRows[i - 1].structure != row.structure;
        const int decimals = row.unit == "%" ? 1 : 2;
        rows.push_back({first ? row.structure : QString(), QString("%1 (%2)").arg(row.quantity, row.unit),
                        formatValue(row.a, decimals), formatValue(row.b, decimals), formatValue(row.a - row.b, decimals)});
      }
      flow.table({QObject::tr("Structure"), QObject::tr("Quantity"), QObject::tr("A"), QObject::tr("B"),
                  QObject::tr("A - B")},
                 rows, {0.34, 0.18, 0.16, 0.16, 0.16});
    }
    if (!in.views.empty()) {
      flow.heading(QObject::tr("Views"));
      for (const auto& [caption, image] : in.views) flow.picture(image, 0.9, caption);
    }
    painter.end();
  }
  if (!file.commit()) {
    if (error) *error = file.errorString();
    return false;
  }
  return true;
}

}  // namespace penumbra::gui
