#include "gui/light/fluence_map_view.hpp"

#include <algorithm>
#include <cmath>

#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>

namespace penumbra::gui {

namespace {

/// Viridis sampled at 0, 0.1, ..., 1 (matplotlib's perceptually uniform map): monotonic in
/// lightness, so the log scale reads the same in grey and for colour-blind viewers.
constexpr QRgb kViridis[11] = {0x440154, 0x482475, 0x414487, 0x355F8D, 0x2A788E, 0x21918C,
                               0x22A884, 0x44BF70, 0x7AD151, 0xBDDF26, 0xFDE725};
constexpr QRgb kNoData = 0x2b2b2b;  ///< bins where no packet deposited weight

QRgb viridis(double t) {
  t = std::clamp(t, 0.0, 1.0) * 10.0;
  const int i = std::min(9, int(t));
  const double f = t - i;
  const QColor a(kViridis[i]), b(kViridis[i + 1]);
  return qRgb(int(a.red() + f * (b.red() - a.red()) + 0.5),
              int(a.green() + f * (b.green() - a.green()) + 0.5),
              int(a.blue() + f * (b.blue() - a.blue()) + 0.5));
}

/// Round tick step (1, 2 or 5 x 10^k) giving about `count` ticks over `span`.
double niceStep(double span, int count) {
  const double raw = span / std::max(1, count);
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0})
    if (raw <= m * p) return m * p;
  return 10 * p;
}

/// "10" with a raised exponent, right-aligned at `right`, vertically centred on `y`.
void drawPowerOfTen(QPainter& p, int right, int y, int exponent) {
  const QFont base = p.font();
  QFont small = base;
  small.setPointSizeF(base.pointSizeF() * 0.75);
  const QString e = QString::number(exponent);
  const int we = QFontMetrics(small).horizontalAdvance(e);
  const int wb = QFontMetrics(base).horizontalAdvance("10");
  const int asc = QFontMetrics(base).ascent();
  p.drawText(right - we - wb, y + asc / 2 - 1, "10");
  p.setFont(small);
  p.drawText(right - we, y - asc / 4, e);
  p.setFont(base);
}

}  // namespace

QString formatLevel(double v) {
  QString s = QString::number(v, 'g', 6);
  s.replace("e-0", "e-").replace("e+0", "e").replace("e+", "e");
  return s;
}

std::vector<Segment2> scalarIsoline(const std::vector<double>& f, int nu, int nv, double level) {
  std::vector<Segment2> out;
  if (nu < 2 || nv < 2 || f.size() != std::size_t(nu) * nv) return out;
  // Corners c0=(u,v) c1=(u+1,v) c2=(u+1,v+1) c3=(u,v+1); edges e0=c0c1 e1=c1c2 e2=c2c3 e3=c3c0.
  static constexpr int kCorner[4][2] = {{0, 0}, {1, 0}, {1, 1}, {0, 1}};
  static constexpr int kEdge[4][2] = {{0, 1}, {1, 2}, {2, 3}, {3, 0}};
  static constexpr int kSeg[16][4] = {
      {-1, -1, -1, -1}, {3, 0, -1, -1}, {0, 1, -1, -1}, {3, 1, -1, -1},
      {1, 2, -1, -1},   {3, 0, 1, 2},   {0, 2, -1, -1}, {3, 2, -1, -1},
      {2, 3, -1, -1},   {0, 2, -1, -1}, {0, 1, 2, 3},   {1, 2, -1, -1},
      {1, 3, -1, -1},   {0, 1, -1, -1}, {3, 0, -1, -1}, {-1, -1, -1, -1}};
  for (int u = 0; u + 1 < nu; ++u)
    for (int v = 0; v + 1 < nv; ++v) {
      double c[4];
      int code = 0;
      bool finite = true;
      for (int k = 0; k < 4; ++k) {
        c[k] = f[std::size_t(u + kCorner[k][0]) * nv + (v + kCorner[k][1])];
        finite = finite && std::isfinite(c[k]);
        if (c[k] >= level) code |= 1 << k;
      }
      if (!finite || code == 0 || code == 15) continue;
      const int* seg = kSeg[code];
      // Saddles: when the cell's mean is on the other side, the other pairing of the edges.
      const bool centreAbove = (c[0] + c[1] + c[2] + c[3]) / 4 >= level;
      static constexpr int kSaddle5[4] = {0, 1, 2, 3}, kSaddle10[4] = {3, 0, 1, 2};
      if (code == 5 && centreAbove) seg = kSaddle5;
      if (code == 10 && centreAbove) seg = kSaddle10;
      auto point = [&](int e, float& pu, float& pv) {
        const int a = kEdge[e][0], b = kEdge[e][1];
        const double t = (level - c[a]) / (c[b] - c[a]);
        pu = float(u + kCorner[a][0] + t * (kCorner[b][0] - kCorner[a][0]));
        pv = float(v + kCorner[a][1] + t * (kCorner[b][1] - kCorner[a][1]));
      };
      for (int e = 0; e < 4 && seg[e] >= 0; e += 2) {
        Segment2 s{};
        point(seg[e], s.u0, s.v0);
        point(seg[e + 1], s.u1, s.v1);
        out.push_back(s);
      }
    }
  return out;
}

FluenceMapView::FluenceMapView(QWidget* parent) : QWidget(parent) {
  setObjectName("fluenceMap");
  setMouseTracking(true);
  setMinimumSize(420, 260);
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
}

void FluenceMapView::clear() {
  values_.clear();
  log10_.clear();
  nu_ = nv_ = 0;
  image_ = QImage();
  contours_.assign(levels_.size(), {});
  update();
}

void FluenceMapView::setData(const std::vector<double>& fluence, int nr, int nz, double dr,
                             double dz, const std::vector<double>& interfaces) {
  if (nr < 1 || nz < 1 || fluence.size() != std::size_t(nr) * nz) return clear();
  // Leave out MCML's overflow bins (the last r and z bins) where the grid allows, and the
  // depths below the tissue (the ambient medium there tallies nothing).
  nu_ = nr > 1 ? nr - 1 : nr;
  nv_ = nz > 1 ? nz - 1 : nz;
  if (!interfaces.empty() && interfaces.back() > 0)
    nv_ = std::clamp(int(std::ceil(interfaces.back() / dz - 1e-9)), 1, nv_);
  dr_ = dr;
  dz_ = dz;
  interfaces_ = interfaces;
  values_.assign(std::size_t(nu_) * nv_, 0.0);
  double maxV = 0, minPos = 0;
  for (int u = 0; u < nu_; ++u)
    for (int v = 0; v < nv_; ++v) {
      const double x = fluence[std::size_t(u) * nz + v];
      values_[std::size_t(u) * nv_ + v] = x;
      if (x > 0 && std::isfinite(x)) {
        maxV = std::max(maxV, x);
        minPos = minPos == 0 ? x : std::min(minPos, x);
      }
    }
  if (maxV > 0) {
    hi_ = std::pow(10.0, std::ceil(std::log10(maxV)));
    lo_ = std::max(std::pow(10.0, std::floor(std::log10(minPos))), hi_ * 1e-10);
    if (lo_ >= hi_) lo_ = hi_ / 10;
  } else {
    lo_ = 1;
    hi_ = 10;
  }
  // Contours run on log10(phi): straighter between bins of a steep exponential fall-off than
  // phi itself. Empty bins sit far below every level, so lines close around the data.
  const double floorLog = std::log10(lo_) - 6;
  log10_.resize(values_.size());
  for (std::size_t i = 0; i < values_.size(); ++i)
    log10_[i] = values_[i] > 0 ? std::log10(values_[i]) : floorLog;
  rebuildImage();
  rebuildContours();
  update();
}

void FluenceMapView::setLevels(const std::vector<double>& levels) {
  levels_.clear();
  for (double l : levels)
    if (l > 0 && std::isfinite(l)) levels_.push_back(l);
  std::sort(levels_.begin(), levels_.end(), std::greater<>());
  rebuildContours();
  update();
}

int FluenceMapView::contourSegmentCount(int i) const {
  return i >= 0 && i < int(contours_.size()) ? int(contours_[std::size_t(i)].size()) : 0;
}

void FluenceMapView::rebuildImage() {
  image_ = QImage(nu_, nv_, QImage::Format_RGB32);
  const double a = std::log10(lo_), span = std::log10(hi_) - a;
  for (int v = 0; v < nv_; ++v) {
    auto* line = reinterpret_cast<QRgb*>(image_.scanLine(v));
    for (int u = 0; u < nu_; ++u) {
      const double x = values_[std::size_t(u) * nv_ + v];
      line[u] = x > 0 ? viridis((std::log10(x) - a) / span) : kNoData;
    }
  }
}

void FluenceMapView::rebuildContours() {
  contours_.assign(levels_.size(), {});
  if (!hasData()) return;
  for (std::size_t i = 0; i < levels_.size(); ++i)
    contours_[i] = scalarIsoline(log10_, nu_, nv_, std::log10(levels_[i]));
}

QRect FluenceMapView::plotRect() const {
  // Left: z labels and title; bottom: r labels and title; right: the colour bar.
  return QRect(62, 26, std::max(40, width() - 62 - 96), std::max(40, height() - 26 - 44));
}

void FluenceMapView::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), palette().window());
  const QRect pr = plotRect();
  const QColor text = palette().color(QPalette::WindowText);
  p.setPen(text);
  p.drawText(QRect(pr.left(), 2, pr.width(), 22), Qt::AlignCenter,
             tr("Fluence \u03a6(r, z) per launched photon weight [cm\u207b\u00b2]"));
  if (!hasData()) {
    p.drawRect(pr.adjusted(0, 0, -1, -1));
    p.drawText(pr, Qt::AlignCenter, tr("No result: press Run"));
    return;
  }
  p.drawImage(pr, image_);

  // Layer interfaces inside the drawn depth.
  const double rMax = nu_ * dr_, zMax = nv_ * dz_;
  p.setPen(QPen(QColor(255, 255, 255, 140), 1, Qt::DashLine));
  for (double z : interfaces_)
    if (z > 0 && z < zMax) {
      const int y = pr.top() + int(std::lround(z / zMax * pr.height()));
      p.drawLine(pr.left(), y, pr.right(), y);
    }

  // Isofluence lines: white over a dark halo, readable on both ends of viridis.
  auto toPixel = [&](float u, float v) {
    return QPointF(pr.left() + (u + 0.5) / nu_ * pr.width(),
                   pr.top() + (v + 0.5) / nv_ * pr.height());
  };
  p.setRenderHint(QPainter::Antialiasing, true);
  for (int pass = 0; pass < 2; ++pass) {
    p.setPen(pass == 0 ? QPen(QColor(0, 0, 0, 150), 3.2) : QPen(Qt::white, 1.4));
    for (const auto& segs : contours_)
      for (const Segment2& s : segs) p.drawLine(toPixel(s.u0, s.v0), toPixel(s.u1, s.v1));
  }
  // Each line labelled near where it crosses the plot's diagonal (the lines are nested around
  // the entry point at the top-left corner); a label that would cover another moves along its
  // line, and is left out when no free place is found.
  QFont labelFont = font();
  labelFont.setPointSizeF(font().pointSizeF() * 0.85);
  p.setFont(labelFont);
  std::vector<QRectF> placed;
  for (std::size_t i = 0; i < contours_.size(); ++i) {
    const QString label = formatLevel(levels_[i]);
    const QRectF box = QFontMetricsF(labelFont).boundingRect(label).adjusted(-2, -1, 2, 1);
    std::vector<std::pair<double, QPointF>> candidates;
    for (const Segment2& s : contours_[i]) {
      const double x = (0.5 * (s.u0 + s.u1) + 0.5) / nu_, y = (0.5 * (s.v0 + s.v1) + 0.5) / nv_;
      candidates.push_back({std::abs(x - y), toPixel(0.5f * (s.u0 + s.u1), 0.5f * (s.v0 + s.v1))});
    }
    std::sort(candidates.begin(), candidates.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& c : candidates) {
      const QRectF r(c.second.x() + 3, c.second.y() - box.height() - 1, box.width(), box.height());
      if (!QRectF(pr).contains(r) ||
          std::any_of(placed.begin(), placed.end(),
                      [&](const QRectF& o) { return o.intersects(r.adjusted(-2, -2, 2, 2)); }))
        continue;
      placed.push_back(r);
      p.fillRect(r, QColor(0, 0, 0, 150));
      p.setPen(Qt::white);
      p.drawText(r, Qt::AlignCenter, label);
      break;
    }
  }
  p.setFont(font());
  p.setRenderHint(QPainter::Antialiasing, false);

  // Axes: r along the top edge of the tissue is the surface, so r ticks go below the map.
  p.setPen(text);
  p.drawRect(pr.adjusted(0, 0, -1, -1));
  const QFontMetrics fm(font());
  const double rStep = niceStep(rMax, std::max(2, pr.width() / 90));
  for (double r = 0; r <= rMax + 1e-9; r += rStep) {
    const int x = pr.left() + int(std::lround(r / rMax * pr.width()));
    p.drawLine(x, pr.bottom(), x, pr.bottom() + 4);
    const QString t = QString::number(r, 'g', 4);
    p.drawText(x - fm.horizontalAdvance(t) / 2, pr.bottom() + 5 + fm.ascent(), t);
  }
  p.drawText(QRect(pr.left(), pr.bottom() + 6 + fm.height(), pr.width(), fm.height() + 2),
             Qt::AlignCenter, tr("r [cm]"));
  const double zStep = niceStep(zMax, std::max(2, pr.height() / 45));
  for (double z = 0; z <= zMax + 1e-9; z += zStep) {
    const int y = pr.top() + int(std::lround(z / zMax * pr.height()));
    p.drawLine(pr.left() - 4, y, pr.left(), y);
    const QString t = QString::number(z, 'g', 4);
    p.drawText(pr.left() - 6 - fm.horizontalAdvance(t), y + fm.ascent() / 2 - 1, t);
  }
  p.save();
  p.translate(12, pr.center().y());
  p.rotate(-90);
  p.drawText(QRect(-pr.height() / 2, -fm.height() / 2 - 4, pr.height(), fm.height() + 2),
             Qt::AlignCenter, tr("depth z [cm]"));
  p.restore();

  // Colour bar: one tick per decade, the isofluence levels marked in white.
  const QRect bar(pr.right() + 14, pr.top(), 16, pr.height());
  const double a = std::log10(lo_), b = std::log10(hi_);
  for (int y = 0; y < bar.height(); ++y) {
    p.setPen(QColor(viridis(1.0 - double(y) / std::max(1, bar.height() - 1))));
    p.drawLine(bar.left(), bar.top() + y, bar.right(), bar.top() + y);
  }
  p.setPen(text);
  p.drawRect(bar.adjusted(0, 0, -1, -1));
  const int decades = int(std::lround(b - a));
  const int every = decades > 12 ? 2 : 1;
  for (int k = int(std::lround(a)); k <= int(std::lround(b)); ++k) {
    const int y = bar.bottom() - int(std::lround((k - a) / (b - a) * (bar.height() - 1)));
    p.drawLine(bar.right(), y, bar.right() + 3, y);
    if ((k - int(std::lround(a))) % every == 0) drawPowerOfTen(p, bar.right() + 34, y, k);
  }
  p.setPen(QPen(Qt::white, 2));
  for (double l : levels_)
    if (l >= lo_ && l <= hi_) {
      const int y =
          bar.bottom() - int(std::lround((std::log10(l) - a) / (b - a) * (bar.height() - 1)));
      p.drawLine(bar.left() + 1, y, bar.right() - 1, y);
    }
  p.setPen(text);
  p.save();
  p.translate(bar.right() + 48, bar.center().y());
  p.rotate(90);
  p.drawText(QRect(-bar.height() / 2, -fm.height() / 2 - 2, bar.height(), fm.height() + 2),
             Qt::AlignCenter, tr("\u03a6 [cm\u207b\u00b2]"));
  p.restore();
}

void FluenceMapView::mouseMoveEvent(QMouseEvent* event) {
  const QRect pr = plotRect();
  const QPointF pos = event->position();
  if (!hasData() || !pr.contains(pos.toPoint())) return emit hovered({});
  const int u = std::clamp(int((pos.x() - pr.left()) / pr.width() * nu_), 0, nu_ - 1);
  const int v = std::clamp(int((pos.y() - pr.top()) / pr.height() * nv_), 0, nv_ - 1);
  const double x = value(u, v);
  emit hovered(tr("r %1 cm, z %2 cm: \u03a6 = %3 cm\u207b\u00b2")
                   .arg((u + 0.5) * dr_, 0, 'g', 4)
                   .arg((v + 0.5) * dz_, 0, 'g', 4)
                   .arg(x > 0 ? QString::number(x, 'g', 4) : tr("0 (no packet absorbed here)")));
}

void FluenceMapView::leaveEvent(QEvent*) { emit hovered({}); }

}  // namespace penumbra::gui
