// Figures for papers. See figures.h.

// Index of this file:
//   [SECTION] Page and style
//   [SECTION] Text fitting
//   [SECTION] Writing a figure
//   [SECTION] Public text helpers
//   [SECTION] Token maps
//   [SECTION] Heatmaps and grids
//   [SECTION] Lines and bars
//   [SECTION] Interval panels
//   [SECTION] Scatters and saved maps
//   [SECTION] Export
//   [SECTION] Venue presets
//   [SECTION] Analysis figures

#include "dstudio/viz/figures.h"

#include <qcustomplot.h>
#include <unistd.h>

#include <QApplication>
#include <QPaintEngine>
#include <QRegularExpression>
#include <QSvgGenerator>
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <sstream>
#include <stdexcept>
#include <typeinfo>

#include "colors.h"
#include "dstudio/analysis/window_maps.h"
#include "dstudio/common/atomic_file.h"
#include "dstudio/common/csv.h"
#include "dstudio/common/error.h"
#include "dstudio/common/read_file.h"
#include "figure_style_fields.h"
#include "gradients.h"

namespace dstudio::viz {
namespace {

using colors::categorical;

// ---------------------------------------------------------------------------------------------
// [SECTION] Page and style
// Canvas sizes, fonts, axes, titles, legends.

// Sizes in points; the plot's pixels are points, so a font of N pixels prints at N points.
struct Canvas {
  int width, height;
};

double height_inches(const FigureStyle& s) {
  return s.height > 0 ? s.height : s.width / 1.618;
}

Canvas canvas(const FigureStyle& s) {
  return {static_cast<int>(std::lround(s.width * 72.0)),
          static_cast<int>(std::lround(height_inches(s) * 72.0))};
}

// A font of `points` points in the style's family. Pixel sizes are whole numbers, so sizes
// round to the nearest point.
QFont font_of(const FigureStyle& s, double points) {
  QFont f(s.font_family.isEmpty() ? QString(kSansFamily) : s.font_family);
  f.setPixelSize(std::max(1, static_cast<int>(std::lround(points))));
  return f;
}

// Axes, ticks and grid are drawn thinner than the data, in proportion to the line width.
double frame_width(const FigureStyle& s) {
  return std::clamp(0.5 * s.line_width, 0.3, 1.5);
}

void style_axis(QCPAxis* axis, const FigureStyle& s) {
  axis->setLabelFont(font_of(s, s.axisFont()));
  axis->setTickLabelFont(font_of(s, s.tickFont()));
  axis->setBasePen(QPen(Qt::black, frame_width(s)));
  axis->setTickPen(QPen(Qt::black, frame_width(s)));
  axis->setSubTickPen(QPen(Qt::black, 0.7 * frame_width(s)));
  axis->grid()->setPen(QPen(QColor(225, 225, 225), 0.7 * frame_width(s)));
  // Tick marks outside the data, where they cover neither cells nor curves; text close to them,
  // since a column-wide figure has no room to spare.
  axis->setTickLength(0, 3);
  axis->setSubTickLength(0, 1.5);
  axis->setTickLabelPadding(2);
  axis->setLabelPadding(3);
}

// Tick labels set as numbers are in print: a minus sign (U+2212) where Qt writes a hyphen, and on
// an axis whose data are whole numbers (layers, steps, context lengths, episodes) whole-number
// ticks only, never "1.5 layers".
class TypesetTicker : public QCPAxisTicker {
 public:
  explicit TypesetTicker(bool whole) : whole_(whole) {}

 protected:
  double getTickStep(const QCPRange& range) override {
    const double step = QCPAxisTicker::getTickStep(range);
    return whole_ ? std::max(1.0, std::floor(step)) : step;
  }
  int getSubTickCount(double step) override {
    // Sub-ticks between whole numbers would mark values the data cannot take.
    return whole_ && step < 10 ? std::max(0, static_cast<int>(std::lround(step)) - 1)
                               : QCPAxisTicker::getSubTickCount(step);
  }
  QString getTickLabel(double tick, const QLocale& locale, QChar format, int precision) override {
    return QCPAxisTicker::getTickLabel(tick, locale, format, precision)
        .replace(QLatin1Char('-'), QChar(0x2212));
  }

 private:
  bool whole_;
};

std::vector<QCPAxis*> all_axes(QCustomPlot& plot);

// True when every value a plottable puts on `axis` is a whole number (and there is one).
bool whole_numbers_on(QCustomPlot& plot, const QCPAxis* axis) {
  int values = 0;
  for (int i = 0; i < plot.plottableCount(); ++i) {
    auto* p = plot.plottable(i);
    if (qobject_cast<QCPErrorBars*>(p)) continue;  // its values are the errors' lengths
    const bool key = p->keyAxis() == axis, value = p->valueAxis() == axis;
    if (!key && !value) continue;
    const auto* data = p->interface1D();
    if (!data) return false;  // a colour map: its cells span the axis continuously
    for (int k = 0; k < data->dataCount(); ++k) {
      const double v = key ? data->dataMainKey(k) : data->dataMainValue(k);
      if (std::isnan(v)) continue;
      if (v != std::round(v)) return false;
      ++values;
    }
  }
  return values > 0;
}

// Every axis's numbers typeset (TypesetTicker); a text ticker's numeric labels get the minus sign.
void typeset_ticks(QCustomPlot& plot) {
  static const QRegularExpression negative(QStringLiteral(R"(^-(?=[\d.]))"));
  for (auto* axis : all_axes(plot)) {
    const auto ticker = axis->ticker();
    if (auto text = ticker.dynamicCast<QCPAxisTickerText>()) {
      for (auto& label : text->ticks()) label.replace(negative, QString(QChar(0x2212)));
      continue;
    }
    if (!ticker || typeid(*ticker) != typeid(QCPAxisTicker)) continue;  // already set, or log
    QSharedPointer<QCPAxisTicker> typeset(new TypesetTicker(whole_numbers_on(plot, axis)));
    typeset->setTickCount(ticker->tickCount());
    typeset->setTickOrigin(ticker->tickOrigin());
    typeset->setTickStepStrategy(ticker->tickStepStrategy());
    axis->setTicker(typeset);
  }
}

// The plot laid out at the canvas's size. A hidden widget gets no resize event, so the viewport
// is set as well: positions measured after this are those of the page.
void lay_out(QCustomPlot& plot, Canvas c) {
  typeset_ticks(plot);
  plot.resize(c.width, c.height);
  plot.setViewport(QRect(0, 0, c.width, c.height));
  plot.replot();
}

bool has_title(const FigureStyle& s) {
  return s.show_title && !s.title.isEmpty();
}

// A title line wider than the page is broken at its last space that fits, so that no
// word is cut at the page's edge.
// A number left alone on a paragraph's last line ("Spearman" / "-0.27", "seed0-" / "20261125")
// takes the word before it along, when the two fit a line.
void keep_number_with_its_word(QStringList& lines, const QFontMetricsF& metrics, double width) {
  static const QRegularExpression lone_number(QStringLiteral(R"(^[-\x{2212}+]?\d+([.,]\d+)?$)"));
  if (lines.size() < 2 || !lone_number.match(lines.back().trimmed()).hasMatch()) return;
  QString& before = lines[lines.size() - 2];
  const bool hyphen_break = before.endsWith('-');
  const qsizetype space = before.lastIndexOf(' ');
  const qsizetype hyphen = hyphen_break ? before.lastIndexOf('-', before.size() - 2) : -1;
  const qsizetype at = std::max(space, hyphen);
  if (at <= 0) return;
  const QString moved = before.mid(at + 1);
  const QString joined = hyphen_break ? moved + lines.back() : moved + ' ' + lines.back();
  if (metrics.horizontalAdvance(joined) > width) return;
  before = before.left(at == hyphen ? at + 1 : at);
  lines.back() = joined;
}

QString fitted_title(const QString& title, const QFont& font, int width) {
  const QFontMetrics metrics(font);
  QStringList lines;
  for (QString line : title.split('\n')) {
    QStringList paragraph;
    while (metrics.horizontalAdvance(line) > width) {
      int cut = -1;
      for (int i = line.size() - 1; i > 0; --i)
        if (line[i] == ' ' && metrics.horizontalAdvance(line.left(i)) <= width) {
          cut = i;
          break;
        }
      if (cut <= 0) break;  // one word wider than the page: left as it is
      paragraph << line.left(cut);
      line = line.mid(cut + 1);
    }
    paragraph << line;
    keep_number_with_its_word(paragraph, QFontMetricsF(font), width);
    lines << paragraph;
  }
  return lines.join('\n');
}

void style_plot(QCustomPlot& plot, const FigureStyle& s) {
  for (auto* axis : {plot.xAxis, plot.yAxis, plot.yAxis2}) style_axis(axis, s);
  // QCustomPlot keeps 15 px around the axes whatever they need; on a 3.25 in figure that is
  // space the data need more. The right keeps room for the last tick label's overhang.
  plot.axisRect()->setMinimumMargins(QMargins(3, 3, 8, 3));
  plot.legend->setFont(font_of(s, s.tickFont()));
  plot.legend->setBorderPen(QPen(QColor(180, 180, 180), 0.7 * frame_width(s)));
  plot.legend->setIconSize(14, 6);
  plot.legend->setMargins(QMargins(3, 2, 3, 2));
  plot.legend->setBrush(QColor(255, 255, 255, 210));
  if (has_title(s)) {
    plot.plotLayout()->insertRow(0);
    auto* title = new QCPTextElement(
        &plot, fitted_title(s.title, font_of(s, 0.95 * s.font), canvas(s).width - 8),
        font_of(s, 0.95 * s.font));
    plot.plotLayout()->addElement(0, 0, title);
  }
}

// The figure's own axis titles unless the style overrides them.
void label_axes(QCustomPlot& plot, const FigureStyle& s, const QString& x, const QString& y) {
  plot.xAxis->setLabel(s.x_title.isEmpty() ? x : s.x_title);
  plot.yAxis->setLabel(s.y_title.isEmpty() ? y : s.y_title);
}

// Axes of an embedding: no ticks, no grid, no zero line.
void unitless_axes(QCustomPlot& plot) {
  for (auto* axis : {plot.xAxis, plot.yAxis}) {
    axis->setTicks(false);
    axis->grid()->setVisible(false);
    axis->grid()->setZeroLinePen(Qt::NoPen);
  }
}

// The legend in rows under the plot, where it hides no data, no wider than its entries and
// centred: as many entries a row as fit the page with their names whole, and when that would
// take more than a sixth of the height, more a row with the names shortened in the middle (runs
// differ at their ends: seed, date).
void legend_below(QCustomPlot& plot, const FigureStyle& s) {
  auto* sub = new QCPLayoutGrid;
  plot.plotLayout()->addElement(plot.plotLayout()->rowCount(), 0, sub);
  plot.plotLayout()->setRowStretchFactor(plot.plotLayout()->rowCount() - 1, 0.001);
  sub->addElement(0, 0, new QCPLayoutElement(&plot));
  sub->addElement(0, 1, plot.legend);
  sub->addElement(0, 2, new QCPLayoutElement(&plot));
  sub->setMinimumMargins(QMargins(2, 0, 2, 2));  // the legend's frame stays inside the page
  plot.legend->setColumnSpacing(6);
  plot.legend->setRowSpacing(0);
  // Room for a name drawn past its whole screen pixels (fit_text), counted in what fits.
  for (int i = 0; i < plot.legend->itemCount(); ++i)
    if (auto* item = plot.legend->item(i)) item->setMargins(QMargins(0, 0, 1, 1));
  plot.legend->setFillOrder(QCPLegend::foColumnsFirst, false);
  std::vector<std::pair<QCPAbstractPlottable*, QString>> entries;
  for (int i = 0; i < plot.legend->itemCount(); ++i)
    if (auto* item = qobject_cast<QCPPlottableLegendItem*>(plot.legend->item(i)))
      entries.push_back({item->plottable(), item->plottable()->name()});
  const auto m = plot.legend->margins();
  const int room = canvas(s).width - 8 - m.left() - m.right();
  const int count = std::max(1, static_cast<int>(entries.size()));
  const int chrome = plot.legend->iconSize().width() + plot.legend->iconTextPadding() +
                     plot.legend->columnSpacing() + 4;
  const QFont base = plot.legend->font();
  QFontMetrics metrics(base);
  int widest = 0, columns = 1;
  // Entry i goes to column i % n; a column is as wide as its widest name.
  const auto whole_width = [&](int n) {
    std::vector<int> widths(static_cast<std::size_t>(n), 0);
    for (std::size_t i = 0; i < entries.size(); ++i)
      widths[i % static_cast<std::size_t>(n)] = std::max(
          widths[i % static_cast<std::size_t>(n)], metrics.horizontalAdvance(entries[i].second));
    int total = -plot.legend->columnSpacing();  // spacing between columns, not after the last
    for (int w : widths) total += w + chrome;
    return total;
  };
  const auto arrange = [&](int n) {
    const bool whole = whole_width(n) <= room;
    const int width = room / n - chrome;
    for (const auto& [plottable, name] : entries)
      plottable->setName(whole || metrics.horizontalAdvance(name) <= width
                             ? name
                             : metrics.elidedText(name, Qt::ElideMiddle, width));
    plot.legend->setWrap(n);
    plot.legend->setFillOrder(QCPLegend::foColumnsFirst,
                              true);  // the items already in it are laid out again
  };
  const auto rows_of = [&](int n) { return (count + n - 1) / n; };
  // Names whole if at all possible: in smaller type (down to four fifths) and as many rows as a
  // fifth of the height holds, before any is shortened in the middle (a legend that says
  // "R (r…-go)" names nothing).
  const double most = canvas(s).height / 5.0;
  for (double scale : {1.0, 0.9, 0.8}) {
    QFont font = base;
    if (base.pointSizeF() > 0)
      font.setPointSizeF(std::max(5.0, base.pointSizeF() * scale));
    else if (base.pixelSize() > 0)
      font.setPixelSize(std::max(5, static_cast<int>(std::lround(base.pixelSize() * scale))));
    plot.legend->setFont(font);
    metrics = QFontMetrics(font);
    // A row as tall as its text: the icon's default 18 px would double each row.
    plot.legend->setIconSize(plot.legend->iconSize().width(),
                             std::min(plot.legend->iconSize().height(), metrics.height()));
    widest = 0;
    for (const auto& e : entries) widest = std::max(widest, metrics.horizontalAdvance(e.second));
    // The most columns whose names fit whole (short names share a column with long ones).
    columns = 1;
    for (int n = 2; n <= count; ++n)
      if (whole_width(n) <= room && rows_of(n) < rows_of(columns)) columns = n;
    arrange(columns);
    if (whole_width(columns) <= room && plot.legend->minimumOuterSizeHint().height() <= most) break;
  }
  while (columns < count && plot.legend->minimumOuterSizeHint().height() > most &&
         room / (columns + 1) - chrome >=
             metrics.horizontalAdvance(QStringLiteral("abcd\u2026wxyz")))
    arrange(++columns);
  plot.legend->setVisible(true);
  plot.legend->setSizeConstraintRect(QCPLayoutElement::scrOuterRect);
  plot.legend->setMaximumSize(plot.legend->minimumOuterSizeHint());
}

// A note under everything else (what a reader must know with the figure), in the tick labels'
// type, broken into lines at the page's width. Returns the height it takes, in points.
double add_note(QCustomPlot& plot, const FigureStyle& s, const QString& text) {
  if (text.isEmpty()) return 0.0;
  const QFont font = font_of(s, s.tickFont());
  auto* note = new QCPTextElement(&plot, wrapped_text(text, font, canvas(s).width - 8), font);
  note->setTextColor(QColor(170, 68, 0));  // Okabe-Ito's vermilion, darkened: read as a caveat
  note->setMargins(QMargins(2, 2, 2, 2));
  auto* layout = plot.plotLayout();
  const int row = layout->rowCount();
  layout->addElement(row, 0, note);
  layout->setRowStretchFactor(row, 0.001);
  const QCPLayoutElement* element = note;
  return element->minimumOuterSizeHint().height() + layout->rowSpacing();
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Text fitting
// Where text went, tick labels thinned, margins grown.

// A paint device that draws nothing and remembers where text went: the ink bounding box of each
// piece of text under the painter's transform (rotated tick labels included).
class TextRecordingEngine final : public QPaintEngine {
 public:
  TextRecordingEngine() : QPaintEngine(QPaintEngine::AllFeatures) {}
  bool begin(QPaintDevice*) override { return true; }
  bool end() override { return true; }
  void updateState(const QPaintEngineState& changed) override {
    if (changed.state() & QPaintEngine::DirtyTransform) transform_ = changed.transform();
  }
  void drawPixmap(const QRectF&, const QPixmap&, const QRectF&) override {}
  void drawImage(const QRectF&, const QImage&, const QRectF&, Qt::ImageConversionFlags) override {}
  void drawPath(const QPainterPath&) override {}
  void drawPolygon(const QPointF*, int, PolygonDrawMode) override {}
  void drawPolygon(const QPoint*, int, PolygonDrawMode) override {}
  void drawLines(const QLineF*, int) override {}
  void drawLines(const QLine*, int) override {}
  void drawRects(const QRectF*, int) override {}
  void drawRects(const QRect*, int) override {}
  void drawPoints(const QPointF*, int) override {}
  void drawPoints(const QPoint*, int) override {}
  void drawEllipse(const QRectF&) override {}
  void drawTiledPixmap(const QRectF&, const QPixmap&, const QPointF&) override {}
  void drawTextItem(const QPointF& p, const QTextItem& item) override {
    const QString text = item.text();
    if (text.trimmed().isEmpty()) return;
    const QRectF ink = QFontMetricsF(item.font()).tightBoundingRect(text).translated(p);
    texts.push_back({text, transform_.mapRect(ink)});
  }
  [[nodiscard]] Type type() const override { return QPaintEngine::User; }

  std::vector<TextLayout::Text> texts;

 private:
  QTransform transform_;
};

class TextRecorder final : public QPaintDevice {
 public:
  TextRecorder(int width, int height) : width_(width), height_(height) {}
  [[nodiscard]] QPaintEngine* paintEngine() const override { return &engine_; }
  [[nodiscard]] const std::vector<TextLayout::Text>& texts() const { return engine_.texts; }

 protected:
  [[nodiscard]] int metric(PaintDeviceMetric metric) const override {
    switch (metric) {
      case PdmWidth:
        return width_;
      case PdmHeight:
        return height_;
      case PdmWidthMM:
        return static_cast<int>(width_ * 25.4 / 72.0);
      case PdmHeightMM:
        return static_cast<int>(height_ * 25.4 / 72.0);
      case PdmNumColors:
        return 0x7fffffff;
      case PdmDepth:
        return 32;
      case PdmDpiX:
      case PdmDpiY:
      case PdmPhysicalDpiX:
      case PdmPhysicalDpiY:
        return 72;
      case PdmDevicePixelRatio:
        return 1;
      case PdmDevicePixelRatioScaled:
        return static_cast<int>(QPaintDevice::devicePixelRatioFScale());
      default:
        return 0;
    }
  }

 private:
  int width_, height_;
  mutable TextRecordingEngine engine_;
};

// The extent along `axis` of its tick labels, in pixels: (centre, half length) of each.
std::vector<std::pair<double, double>> tick_label_extents(QCPAxis* axis) {
  std::vector<std::pair<double, double>> out;
  if (!axis->visible() || !axis->tickLabels()) return out;
  const QFontMetricsF metrics(axis->tickLabelFont());
  const bool horizontal = axis->orientation() == Qt::Horizontal;
  const double turned = std::abs(std::fmod(axis->tickLabelRotation(), 180.0));
  const bool across = turned > 45.0;  // rotated labels stand across a horizontal axis
  const auto ticks = axis->tickVector();
  const auto labels = axis->tickVectorLabels();
  for (int k = 0; k < ticks.size() && k < labels.size(); ++k) {
    if (labels[k].isEmpty()) continue;
    const QRectF ink = metrics.tightBoundingRect(labels[k]);
    const double along = horizontal == !across ? ink.width() : metrics.ascent();
    out.push_back({axis->coordToPixel(ticks[k]), along / 2.0});
  }
  std::sort(out.begin(), out.end());
  return out;
}

// True when two neighbouring tick labels of `axis` come closer than a third of the font's size.
bool tick_labels_crowded(QCPAxis* axis) {
  const auto extents = tick_label_extents(axis);
  const double gap = QFontMetricsF(axis->tickLabelFont()).height() / 3.5;
  for (std::size_t k = 1; k < extents.size(); ++k)
    if (extents[k].first - extents[k].second < extents[k - 1].first + extents[k - 1].second + gap)
      return true;
  return false;
}

// Fewer tick labels on `axis`: a text ticker keeps every other label, any other asks for fewer
// ticks. False when it cannot thin further.
bool thin_tick_labels(QCPAxis* axis) {
  if (auto text = axis->ticker().dynamicCast<QCPAxisTickerText>()) {
    auto& ticks = text->ticks();
    if (ticks.size() <= 2) return false;
    QMap<double, QString> kept;
    int k = 0;
    for (auto it = ticks.cbegin(); it != ticks.cend(); ++it, ++k)
      if (k % 2 == 0) kept.insert(it.key(), it.value());
    // Minor ticks keep marking what the labels no longer do.
    text->setSubTickCount((text->subTickCount() + 1) * 2 - 1);
    ticks = kept;
    return true;
  }
  const int count = axis->ticker()->tickCount();
  if (count <= 2) return false;
  axis->ticker()->setTickCount(count - 1);
  return true;
}

// Every axis of the plot's axis rects and colour scales.
std::vector<QCPAxis*> all_axes(QCustomPlot& plot) {
  std::vector<QCPAxis*> out;
  for (auto* rect : plot.axisRects())
    for (auto* axis : rect->axes()) out.push_back(axis);
  const std::function<void(QCPLayout*)> scales = [&](QCPLayout* layout) {
    for (int i = 0; i < layout->elementCount(); ++i) {
      auto* element = layout->elementAt(i);
      if (auto* scale = qobject_cast<QCPColorScale*>(element))
        out.push_back(scale->axis());
      else if (auto* inner = qobject_cast<QCPLayout*>(element))
        scales(inner);
    }
  };
  scales(plot.plotLayout());
  return out;
}

// Makes the drawn plot's text fit: tick labels thinned until neighbours keep apart, and margins
// widened where a label at the end of an axis would reach past the page. A few rounds suffice.
void fit_text(QCustomPlot& plot) {
  // A legend's entry clips what it draws and is as wide and tall as its name in whole pixels at
  // screen resolution: drawn at a figure's, the name's last letter and descenders reach a little
  // further.
  if (auto* legend = plot.legend; legend && legend->visible()) {
    bool grown = false;
    for (int i = 0; i < legend->itemCount(); ++i)
      if (auto* item = legend->item(i);
          item && (item->margins().bottom() < 1 || item->margins().right() < 1)) {
        QMargins m = item->margins();
        m.setBottom(std::max(1, m.bottom()));
        m.setRight(std::max(1, m.right()));
        item->setMargins(m);
        grown = true;
      }
    // A legend held to its size (legend_below) takes the new one.
    if (grown && legend->maximumSize() != QSize(QWIDGETSIZE_MAX, QWIDGETSIZE_MAX))
      legend->setMaximumSize(legend->minimumOuterSizeHint());
    if (grown) plot.replot();
  }
  for (int round = 0; round < 12; ++round) {
    bool changed = false;
    for (auto* axis : all_axes(plot)) {
      if (tick_labels_crowded(axis) && thin_tick_labels(axis)) changed = true;
      const QRect rect = axis->axisRect()->rect();
      // An axis title longer than its axis is broken into lines.
      const QString title =
          wrapped_text(axis->label(), axis->labelFont(),
                       axis->orientation() == Qt::Horizontal ? rect.width() : rect.height());
      if (title != axis->label()) {
        axis->setLabel(title);
        changed = true;
      }
    }
    // A label standing on a value (a reference line's name, above its line) stays inside the
    // axis rect that clips it: the value axis grows toward the side it would leave by.
    for (int i = 0; i < plot.itemCount(); ++i) {
      auto* text = qobject_cast<QCPItemText*>(plot.item(i));
      if (!text || !text->clipToAxisRect() || !text->clipAxisRect() ||
          text->position->typeY() != QCPItemPosition::ptPlotCoords || !text->position->valueAxis())
        continue;
      const QRect rect = text->clipAxisRect()->rect();
      const double height = QFontMetricsF(text->font()).height() * (1 + text->text().count('\n')) +
                            text->padding().top() + text->padding().bottom();
      const double y = text->position->pixelPosition().y();
      const double top = text->positionAlignment() & Qt::AlignBottom ? y - height
                         : text->positionAlignment() & Qt::AlignTop  ? y
                                                                     : y - height / 2;
      if (top >= rect.top() || rect.height() <= 0) continue;
      auto* axis = text->position->valueAxis();
      if (axis->scaleType() != QCPAxis::stLinear || axis->rangeReversed()) continue;
      // Its share of the rect, a little more: the next round measures again.
      const auto r = axis->range();
      axis->setRange(r.lower, r.upper + 1.2 * (rect.top() - top + 1.0) / rect.height() * r.size());
      changed = true;
    }
    if (!changed) {
      const TextLayout layout = text_layout(plot);
      const double w = layout.page.width(), h = layout.page.height();
      double left = 0, right = 0, top = 0, bottom = 0;
      for (const auto& t : layout.texts) {
        left = std::max(left, 1.5 - t.box.left());
        right = std::max(right, t.box.right() - (w - 1.5));
        top = std::max(top, 1.5 - t.box.top());
        bottom = std::max(bottom, t.box.bottom() - (h - 1.5));
      }
      if (left > 0 || right > 0 || top > 0 || bottom > 0) {
        QMargins m = plot.axisRect()->minimumMargins();
        m += QMargins(static_cast<int>(std::ceil(left)), static_cast<int>(std::ceil(top)),
                      static_cast<int>(std::ceil(right)), static_cast<int>(std::ceil(bottom)));
        plot.axisRect()->setMinimumMargins(m);
        changed = true;
      }
    }
    if (!changed) return;
    plot.replot();
  }
}

// The figures written while a TextLayoutLog exists.
thread_local TextLayoutLog* layout_log = nullptr;

// ---------------------------------------------------------------------------------------------
// [SECTION] Writing a figure
// PNG at the dpi, PDF and SVG.

// The plot at the style's dpi. The canvas is whole points; the image has exactly inches x dpi
// pixels (3.3 in at 600 dpi: 1980 px, not 238 pt x 600 / 72), scaled by less than a percent per
// axis to get there.
QImage raster(QCustomPlot& plot, const FigureStyle& s) {
  const auto c = canvas(s);
  if (plot.viewport().size() != QSize(c.width, c.height)) {
    lay_out(plot, c);
    fit_text(plot);
  }
  QImage image(static_cast<int>(std::lround(s.width * s.dpi)),
               static_cast<int>(std::lround(height_inches(s) * s.dpi)), QImage::Format_ARGB32);
  image.fill(Qt::white);
  image.setDotsPerMeterX(static_cast<int>(std::lround(s.dpi / 0.0254)));
  image.setDotsPerMeterY(static_cast<int>(std::lround(s.dpi / 0.0254)));
  QCPPainter painter;
  if (!painter.begin(&image)) return {};
  painter.setMode(QCPPainter::pmNonCosmetic);  // line widths scale with the resolution
  painter.scale(static_cast<double>(image.width()) / c.width,
                static_cast<double>(image.height()) / c.height);
  plot.toPainter(&painter, c.width, c.height);
  painter.end();
  return image;
}

// Qt stamps a PDF with the second it was written (/CreationDate in the document information, the
// file's first object), so one figure drawn twice would differ in those bytes alone. The entry is
// overwritten with spaces of its length, which keeps every cross-reference offset valid: a figure
// drawn again from its recipe is then the same PDF byte for byte (the recipe keeps the time).
void remove_pdf_creation_date(const std::string& path) {
  try {
    std::string bytes = read_regular_file(path, std::uint64_t{1} << 30);
    const auto at = bytes.find("/CreationDate (D:");
    if (at == std::string::npos || at > 4096) return;
    const auto end = bytes.find(')', at);
    if (end == std::string::npos) return;
    std::fill(bytes.begin() + static_cast<std::ptrdiff_t>(at),
              bytes.begin() + static_cast<std::ptrdiff_t>(end) + 1, ' ');
    write_bytes_atomically(path, bytes);
  } catch (const Error&) {
    // The PDF as Qt wrote it is whole and valid; only its date stays in it.
  }
}

std::vector<std::string> save_all(QCustomPlot& plot, const std::string& base,
                                  const FigureStyle& s) {
  const auto c = canvas(s);
  lay_out(plot, c);
  fit_text(plot);
  if (layout_log) layout_log->figures.push_back({base, text_layout(plot)});
  const QString b = QString::fromStdString(base);
  const QString title = has_title(s) ? s.title : QString();
  std::vector<std::string> written;
  // Every format asked for is written, or the export stops naming the file that was not.
  const auto refused = [](const std::string& file) {
    return Error(file +
                 ": cannot be written (its folder is missing or not writable, a folder has "
                 "its name, or the disk is full)");
  };
  // Qt's PDF engine embeds the TrueType fonts (as CID fonts); text is never drawn as Type 3.
  if (s.pdf) {
    if (!plot.savePdf(b + ".pdf", c.width, c.height, QCP::epNoCosmetic, "Decision Studio", title))
      throw refused(base + ".pdf");
    remove_pdf_creation_date(base + ".pdf");
    written.push_back(base + ".pdf");
  }
  if (s.svg) {
    QSvgGenerator svg;
    svg.setFileName(b + ".svg");
    svg.setSize(QSize(c.width, c.height));
    svg.setViewBox(QRect(0, 0, c.width, c.height));
    svg.setTitle(title);
    QCPPainter painter;
    if (!painter.begin(&svg)) throw refused(base + ".svg");
    plot.toPainter(&painter, c.width, c.height);
    painter.end();
    written.push_back(base + ".svg");
  }
  if (s.png) {
    const QImage image = raster(plot, s);
    if (image.isNull() || !image.save(b + ".png", "PNG")) throw refused(base + ".png");
    written.push_back(base + ".png");
  }
  return written;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// [SECTION] Public text helpers
// Layouts, wrapped text, notes, scaling.

FigureContext::FigureContext() {
  if (QApplication::instance()) return;
  if (!std::getenv("XDG_RUNTIME_DIR")) {
    // Qt wants a private runtime folder and complains on stderr without one.
    const auto dir =
        std::filesystem::temp_directory_path() / ("dstudio-runtime-" + std::to_string(getuid()));
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    std::filesystem::permissions(dir, std::filesystem::perms::owner_all, ec);
    if (!ec) setenv("XDG_RUNTIME_DIR", dir.c_str(), 1);
  }
  if (!std::getenv("DISPLAY") && !std::getenv("WAYLAND_DISPLAY") && !std::getenv("QT_QPA_PLATFORM"))
    setenv("QT_QPA_PLATFORM", "offscreen", 1);
  static int argc = 1;
  static char name[] = "dstudio";
  static char* argv[] = {name, nullptr};
  app_ = std::make_unique<QApplication>(argc, argv);
}

FigureContext::~FigureContext() = default;

TextLayout text_layout(QCustomPlot& plot) {
  TextLayout layout;
  const QSize size = plot.viewport().size();
  layout.page = QSizeF(size);
  TextRecorder device(size.width(), size.height());
  QCPPainter painter;
  if (painter.begin(&device)) {
    painter.setMode(QCPPainter::pmNoCaching);  // tick labels as text, not cached pixmaps
    plot.toPainter(&painter, size.width(), size.height());
    painter.end();
  }
  layout.texts = device.texts();
  if (auto* rect = plot.axisRect()) {
    layout.plot_area = rect->rect();
    for (auto* axis : rect->axes())
      if (axis->visible() && axis->ticks() &&
          (axis->tickLengthIn() > 0 || axis->subTickLengthIn() > 0))
        layout.ticks_inside = true;
  }
  if (plot.legend && plot.legend->visible() && plot.legend->itemCount() > 0 &&
      plot.legend->layout()) {
    layout.legend = plot.legend->outerRect();
    for (int i = 0; i < plot.legend->itemCount(); ++i)
      if (auto* item = plot.legend->item(i)) layout.legend_entries.push_back(item->outerRect());
  }
  for (int i = 0; i < plot.plottableCount(); ++i) {
    auto* plottable = plot.plottable(i);
    if (!plottable->visible() || !plottable->keyAxis() || !plottable->valueAxis()) continue;
    QCPAxis *keys = plottable->keyAxis(), *values = plottable->valueAxis();
    if (auto* graph = qobject_cast<QCPGraph*>(plottable);
        graph && !graph->scatterStyle().isNone()) {
      const double half = graph->scatterStyle().size() / 2.0;
      for (auto it = graph->data()->constBegin(); it != graph->data()->constEnd(); ++it) {
        if (!keys->range().contains(it->key) || !values->range().contains(it->value) ||
            !std::isfinite(it->value))
          continue;
        const QPointF at = graph->coordsToPixels(it->key, it->value);
        layout.markers.push_back(
            {graph->name(), QRectF(at.x() - half, at.y() - half, 2 * half, 2 * half)});
      }
    }
    if (auto* bars = qobject_cast<QCPErrorBars*>(plottable)) {
      auto* data = bars->dataPlottable();
      if (!data || !data->interface1D()) continue;
      const auto* d = data->interface1D();
      for (int k = 0; k < d->dataCount() && k < bars->dataCount(); ++k) {
        const double key = d->dataMainKey(k), value = d->dataMainValue(k),
                     up = bars->data()->at(k).errorPlus;
        if (!std::isfinite(value) || !std::isfinite(up) || up <= 0) continue;
        const QPointF top = bars->coordsToPixels(key, value + up);
        const double half = bars->whiskerWidth() / 2.0;
        layout.caps.emplace_back(top.x() - half, top.y(), top.x() + half, top.y());
      }
    }
  }
  return layout;
}

QString wrapped_text(const QString& text, const QFont& font, double width) {
  const QFontMetricsF metrics(font);
  // A word wider than the line (a run's name) is broken after its hyphens, as few times as fit.
  const auto pieces = [&](const QString& word) {
    QStringList out;
    if (metrics.horizontalAdvance(word) <= width) return QStringList{word};
    QString piece;
    for (const QString& part : word.split('-')) {
      const QString next = piece.isEmpty() ? part : piece + '-' + part;
      if (!piece.isEmpty() && metrics.horizontalAdvance(next + '-') > width) {
        out << piece + '-';
        piece = part;
      } else {
        piece = next;
      }
    }
    out << piece;
    return out;
  };
  QStringList lines;
  for (const QString& paragraph : text.split('\n')) {
    QStringList paragraph_lines;
    QString line;
    for (const QString& word : paragraph.split(' ')) {
      const QStringList parts = pieces(word);
      const QString longer = line.isEmpty() ? parts.front() : line + ' ' + parts.front();
      if (!line.isEmpty() && metrics.horizontalAdvance(longer) > width) {
        paragraph_lines << line;
        line = parts.front();
      } else {
        line = longer;
      }
      for (qsizetype p = 1; p < parts.size(); ++p) {
        paragraph_lines << line;
        line = parts[p];
      }
    }
    paragraph_lines << line;
    keep_number_with_its_word(paragraph_lines, metrics, width);
    lines << paragraph_lines;
  }
  return lines.join('\n');
}

void legend_above(QCustomPlot* plot) {
  auto* legend = plot->legend;
  if (legend->layout() == plot->plotLayout()) return;
  if (legend->layout()) legend->layout()->take(legend);
  plot->plotLayout()->insertRow(0);
  plot->plotLayout()->addElement(0, 0, legend);
  plot->plotLayout()->setRowStretchFactor(0, 0.001);
  legend->setWrap(4);
  legend->setFillOrder(QCPLegend::foColumnsFirst, true);
  legend->setBorderPen(Qt::NoPen);
  legend->setBrush(Qt::NoBrush);
  legend->setMargins(QMargins(4, 2, 4, 0));
}

void show_legend_above(QCustomPlot* plot, bool shown) {
  auto* legend = plot->legend;
  legend->setVisible(shown);
  if (shown) {
    legend_above(plot);
  } else if (legend->layout() == plot->plotLayout()) {
    plot->plotLayout()->take(legend);
    plot->plotLayout()->simplify();
  }
}

namespace {

// A note broken into lines to the data's width; lines past its height are left out, the last
// kept one ending in an ellipsis, so that a small plot's note never runs over its axes.
QString fitted_note(const QString& text, const QFont& font, const QRect& data) {
  QStringList lines = wrapped_text(text, font, data.width() - 12).split('\n');
  const int room =
      std::max(1, static_cast<int>((data.height() - 4) / QFontMetricsF(font).lineSpacing()));
  if (lines.size() > room) {
    lines = lines.mid(0, room);
    lines.back() = QFontMetricsF(font).elidedText(lines.back() + QStringLiteral(" …"),
                                                  Qt::ElideRight, data.width() - 12);
    if (!lines.back().endsWith(QChar(0x2026))) lines.back() += QChar(0x2026);
  }
  return lines.join('\n');
}

}  // namespace

void set_centred_note(QCustomPlot* plot, const QString& text) {
  constexpr const char* kNote = "dstudio_centred_note";
  auto* note = plot->findChild<QCPItemText*>(QString::fromLatin1(kNote));
  if (text.isEmpty()) {
    if (note) plot->removeItem(note);
    return;
  }
  if (!note) {
    note = new QCPItemText(plot);
    note->setObjectName(QString::fromLatin1(kNote));
    note->position->setType(QCPItemPosition::ptAxisRectRatio);
    note->position->setCoords(0.5, 0.5);
    note->setColor(QColor(119, 119, 119));
    note->setTextAlignment(Qt::AlignCenter);
    // Re-broken at each layout: the data's width changes with the window.
    QObject::connect(plot, &QCustomPlot::afterLayout, note, [plot, note] {
      const QString wanted =
          fitted_note(note->property("whole").toString(), note->font(), plot->axisRect()->rect());
      if (note->text() != wanted) note->setText(wanted);
    });
  }
  note->setProperty("whole", text);
  note->setText(fitted_note(text, note->font(), plot->axisRect()->rect()));
}

QString centred_note(const QCustomPlot* plot) {
  const auto* note = plot->findChild<QCPItemText*>(QStringLiteral("dstudio_centred_note"));
  return note ? note->property("whole").toString() : QString();
}

void set_plot_text_scale(QCustomPlot* plot, double scale) {
  // The scale the plot has now, so that a new one is applied to the sizes it was made with.
  const QVariant now = plot->property("dstudio_text_scale");
  const double ratio = scale / (now.isValid() ? now.toDouble() : 1.0);
  plot->setProperty("dstudio_text_scale", scale);
  if (std::abs(ratio - 1.0) < 1e-9) return;
  const auto scaled = [ratio](QFont f) {
    if (f.pointSizeF() > 0)
      f.setPointSizeF(f.pointSizeF() * ratio);
    else if (f.pixelSize() > 0)
      f.setPixelSize(std::max(1, static_cast<int>(std::lround(f.pixelSize() * ratio))));
    return f;
  };
  for (auto* axis : all_axes(*plot)) {
    axis->setLabelFont(scaled(axis->labelFont()));
    axis->setTickLabelFont(scaled(axis->tickLabelFont()));
    axis->setSelectedLabelFont(scaled(axis->selectedLabelFont()));
    axis->setSelectedTickLabelFont(scaled(axis->selectedTickLabelFont()));
  }
  // Legends (their entries keep fonts of their own), titles and notes, wherever they sit.
  const std::function<void(QCPLayoutElement*)> texts = [&](QCPLayoutElement* e) {
    if (!e) return;
    if (auto* title = qobject_cast<QCPTextElement*>(e)) title->setFont(scaled(title->font()));
    if (auto* legend = qobject_cast<QCPLegend*>(e)) {
      // QCPLegend::setFont gives every entry the legend's font: the entries' own are read first,
      // or each would be scaled twice.
      // A legend laid out in rows and columns has empty cells: item() is null there.
      std::vector<QFont> entries;
      for (int i = 0; i < legend->itemCount(); ++i)
        entries.push_back(legend->item(i) ? legend->item(i)->font() : QFont());
      legend->setFont(scaled(legend->font()));
      for (int i = 0; i < legend->itemCount(); ++i)
        if (auto* item = legend->item(i))
          item->setFont(scaled(entries[static_cast<std::size_t>(i)]));
    }
    for (auto* child : e->elements(false)) texts(child);
  };
  texts(plot->plotLayout());  // an axis rect's elements are its inset layout, legends inside the
                              // data included
  for (int i = 0; i < plot->itemCount(); ++i)
    if (auto* text = qobject_cast<QCPItemText*>(plot->item(i))) text->setFont(scaled(text->font()));
  plot->replot(QCustomPlot::rpQueuedReplot);
}

void keep_text_fitted(QCustomPlot* plot) {
  if (plot->property("dstudio_keeps_text_fitted").toBool()) return;
  plot->setProperty("dstudio_keeps_text_fitted", true);
  QObject::connect(plot, &QCustomPlot::afterLayout, plot, [plot] {
    bool changed = false;
    for (auto* axis : all_axes(*plot)) {
      if (!axis->visible()) continue;
      // The title as its view set it (a title this wrapped is told from a new one).
      if (axis->label() != axis->property("dstudio_fitted_label").toString())
        axis->setProperty("dstudio_title", axis->label());
      const QString title = axis->property("dstudio_title").toString();
      if (!title.isEmpty()) {
        const QRect rect = axis->axisRect()->rect();
        const double length = axis->orientation() == Qt::Horizontal ? rect.width() : rect.height();
        const QString fitted = wrapped_text(title, axis->labelFont(), 0.95 * length);
        axis->setProperty("dstudio_fitted_label", fitted);
        if (fitted != axis->label()) axis->setLabel(fitted), changed = true;
      }
      if (!axis->tickLabels() || axis->ticker().dynamicCast<QCPAxisTickerText>()) continue;
      const int count = axis->ticker()->tickCount();
      if (tick_labels_crowded(axis)) {
        if (count > 2) axis->ticker()->setTickCount(count - 1), changed = true;
        continue;
      }
      const auto extents = tick_label_extents(axis);
      if (count >= 5 || extents.size() < 2) continue;
      double widest = 0;
      for (const auto& e : extents) widest = std::max(widest, 2 * e.second);
      const double spacing =
          (extents.back().first - extents.front().first) / static_cast<double>(extents.size() - 1);
      if (spacing > 3 * (widest + QFontMetricsF(axis->tickLabelFont()).height()))
        axis->ticker()->setTickCount(count + 1), changed = true;
    }
    if (changed) plot->replot(QCustomPlot::rpQueuedReplot);
  });
}

void refit_text(QCustomPlot* plot) {
  if (!plot->property("dstudio_keeps_text_fitted").toBool()) return;
  for (auto* axis : all_axes(*plot))
    if (!axis->ticker().dynamicCast<QCPAxisTickerText>()) axis->ticker()->setTickCount(5);
  // Each layout fits one step further; five are more than any axis takes from five ticks.
  for (int k = 0; k < 5; ++k) plot->replot(QCustomPlot::rpImmediateRefresh);
}

std::vector<std::string> TextLayout::problems(double margin) const {
  std::vector<std::string> out;
  const auto quoted = [](const QString& text) { return "\u00ab" + text.toStdString() + "\u00bb"; };
  const QRectF inside = QRectF(QPointF(0, 0), page).adjusted(margin, margin, -margin, -margin);
  for (const auto& t : texts) {
    if (inside.contains(t.box)) continue;
    const char* edge = t.box.left() < inside.left()     ? "left"
                       : t.box.right() > inside.right() ? "right"
                       : t.box.top() < inside.top()     ? "top"
                                                        : "bottom";
    out.push_back(quoted(t.text) + " reaches the page's " + edge + " edge");
  }
  for (std::size_t i = 0; i < texts.size(); ++i)
    for (std::size_t j = i + 1; j < texts.size(); ++j) {
      const QRectF both = texts[i].box.intersected(texts[j].box);
      if (both.width() > 0.3 && both.height() > 0.3)
        out.push_back(quoted(texts[i].text) + " overlaps " + quoted(texts[j].text));
    }
  // A legend's entry clips what it draws: a name reaching past its box is cut (descenders first).
  for (const auto& entry : legend_entries)
    for (const auto& t : texts)
      if (entry.contains(t.box.center()) && !entry.adjusted(-0.1, -0.1, 0.1, 0.1).contains(t.box))
        out.push_back(quoted(t.text) + " is cut by its legend entry's edge");
  if (!legend.isEmpty()) {
    const QRectF both = legend.intersected(plot_area);
    if (both.width() > 1 && both.height() > 1) out.push_back("the legend covers the data");
    if (legend.height() > page.height() / 5.0)
      out.push_back("the legend takes " +
                    std::to_string(static_cast<int>(100 * legend.height() / page.height())) +
                    "% of the height");
  }
  if (ticks_inside) out.push_back("tick marks reach into the data");
  for (const auto& t : texts) {
    // An ellipsis says a name lost its middle or end: "R (r…-go)" tells no one what it was.
    if (t.text.contains(QChar(0x2026)) || t.text.contains(QStringLiteral("...")))
      out.push_back(quoted(t.text) + " is cut short");
    // A number alone on a line above the data: a title broken before its value ("Spearman" /
    // "-0.27"). (A measured value: signed or with decimals; a date in a run's name is part of the
    // name.)
    static const QRegularExpression number(
        QStringLiteral(R"(^\s*([-\x{2212}+]\d+([.,]\d+)?|[-\x{2212}+]?\d*[.,]\d+)\s*$)"));
    if (!plot_area.isEmpty() && t.box.bottom() <= plot_area.top() &&
        number.match(t.text).hasMatch())
      out.push_back(quoted(t.text) + " stands alone on a title's line");
    for (const auto& cap : caps)
      if (t.box.adjusted(-0.5, -0.5, 0.5, 0.5)
              .intersects(QRectF(cap.p1(), cap.p2()).adjusted(0, -0.5, 0, 0.5))) {
        out.push_back(quoted(t.text) + " is drawn on an error bar's cap");
        break;
      }
  }
  // Half a marker outside the data is cut off by it.
  if (!plot_area.isEmpty()) {
    const QRectF area = plot_area.adjusted(-0.5, -0.5, 0.5, 0.5);
    std::vector<QString> cut;
    for (const auto& m : markers)
      if (!area.contains(m.box) && std::find(cut.begin(), cut.end(), m.series) == cut.end())
        cut.push_back(m.series);
    for (const auto& series : cut)
      out.push_back("a marker of " + quoted(series) + " is cut by the data's edge");
  }
  return out;
}

TextLayoutLog::TextLayoutLog() : previous_(layout_log) {
  layout_log = this;
}
TextLayoutLog::~TextLayoutLog() {
  layout_log = previous_;
}

namespace {

// ---------------------------------------------------------------------------------------------
// [SECTION] Token maps
// Colour scales, token ticks, the maps' axes.

// A colour scale right of the data, the title (when there is one) spanning both: the data and
// the scale share a row of their own, the scale as narrow as its labels allow.
QCPColorScale* beside_scale(QCustomPlot& plot, const FigureStyle& s) {
  auto* row = new QCPLayoutGrid;
  const int at = has_title(s) ? 1 : 0;
  auto* rect = plot.axisRect();
  plot.plotLayout()->take(rect);
  plot.plotLayout()->simplify();
  plot.plotLayout()->insertRow(at);
  plot.plotLayout()->addElement(at, 0, row);
  row->addElement(0, 0, rect);
  auto* scale = new QCPColorScale(&plot);
  row->addElement(0, 1, scale);
  row->setColumnStretchFactor(1, 0.001);
  row->setColumnSpacing(0);
  scale->setType(QCPAxis::atRight);
  scale->setBarWidth(6);
  style_axis(scale->axis(), s);
  auto* group = new QCPMarginGroup(&plot);
  rect->setMarginGroup(QCP::msBottom | QCP::msTop, group);
  scale->setMarginGroup(QCP::msBottom | QCP::msTop, group);
  return scale;
}

struct TokenTicks {
  QSharedPointer<QCPAxisTickerText> ticker;
  bool by_step = false;
};

// A label that is a step's number alone ("12"): a column of steps rather than of tokens.
bool is_step_number(const std::string& label) {
  return !label.empty() && label.size() < 9 &&
         std::all_of(label.begin(), label.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Ticks of a token axis whose tokens are `per_token` pixels apart. Every token labelled when the
// labels fit (rotated on a horizontal axis); otherwise the steps: each k-th step's number at its
// state token (or merged token), k in 1, 2, 5, 10, 20, ... as small as fits, minor ticks at the
// tokens between. Padding is never labelled.
TokenTicks token_ticker(const std::vector<std::string>& labels, double per_token, bool horizontal,
                        const QFont& font) {
  const QFontMetricsF metrics(font);
  const double height = metrics.ascent(), gap = metrics.height() / 3.5;
  TokenTicks out;
  out.ticker.reset(new QCPAxisTickerText);
  if (per_token >= height + gap) {
    for (std::size_t k = 0; k < labels.size(); ++k)
      if (labels[k] != "pad")
        out.ticker->addTick(static_cast<double>(k), QString::fromStdString(labels[k]));
    return out;
  }
  out.by_step = true;
  // The state (or merged) token of each step, with the step's number; a column of a step
  // (a bare number) is its own.
  std::vector<std::pair<int, int>> steps;  // token, step
  for (std::size_t k = 0; k < labels.size(); ++k) {
    const auto& l = labels[k];
    const bool number = is_step_number(l);
    if (!number && (l.size() < 2 || (l[0] != 's' && l[0] != 't'))) continue;
    try {
      steps.push_back({static_cast<int>(k), std::stoi(number ? l : l.substr(1))});
    } catch (const std::exception&) {
    }
  }
  if (steps.empty()) return out;
  const double per_step = steps.size() > 1
                              ? per_token * (steps.back().first - steps.front().first) /
                                    static_cast<double>(steps.size() - 1)
                              : per_token;
  double widest = height;
  if (horizontal)
    for (const auto& [token, step] : steps)
      widest = std::max(widest, metrics.tightBoundingRect(QString::number(step)).width());
  int every = 1;
  for (int nice : {1, 2, 5, 10, 20, 25, 50, 100, 200, 500, 1000}) {
    every = nice;
    if (every * per_step >= widest + gap) break;
  }
  for (const auto& [token, step] : steps)
    if (step % every == 0) out.ticker->addTick(token, QString::number(step));
  const int tokens_per_step = steps.size() > 1 ? (steps[1].first - steps[0].first) : 1;
  out.ticker->setSubTickCount(std::max(0, every * tokens_per_step - 1));
  return out;
}

// Each plot_* draws a figure on `plot` and returns the style it was drawn in (a map or an
// embedding is squarer than a line plot when the height is left to it).
// Draws m's cells on `map`; masked (above the diagonal) and padded cells stay blank. Returns the
// magnitudes of the cells drawn, and widens [lo, hi] to their values.
std::vector<double> fill_token_map(QCPColorMap* map, const analysis::TokenMatrix& m,
                                   const std::vector<std::string>& labels, double& lo, double& hi) {
  const int T = m.tokens;
  map->data()->setSize(T, T);
  map->data()->setRange(QCPRange(0, T - 1), QCPRange(0, T - 1));
  map->setInterpolate(false);
  std::vector<double> seen;
  for (int i = 0; i < T; ++i)
    for (int j = 0; j < T; ++j) {
      const bool blank = j > i || (i < static_cast<int>(labels.size()) &&
                                   (labels[static_cast<std::size_t>(i)] == "pad" ||
                                    labels[static_cast<std::size_t>(j)] == "pad"));
      const double v = blank ? std::nan("") : m.at(i, j);
      map->data()->setCell(j, i, v);
      if (blank || std::isnan(v)) continue;
      lo = std::min(lo, v), hi = std::max(hi, v);
      seen.push_back(std::abs(v));
    }
  return seen;
}

// The scale's colours for values in [lo, hi] of magnitudes `seen`. On an attention map a few
// large weights (a first query has one key) would flatten everything else: with `clip` the range
// ends at the 99th percentile, and the scale's label says so. A diverging map is centred at zero.
void set_map_range(QCPColorScale* scale, bool diverging_map, double lo, double hi,
                   std::vector<double> seen, const QString& colour_label, bool clip = true) {
  QString label = colour_label;
  if (clip && seen.size() > 20) {
    std::sort(seen.begin(), seen.end());
    const double p99 = seen[seen.size() * 99 / 100];
    if (p99 < std::max(std::abs(lo), std::abs(hi)) && p99 > 0) {
      hi = std::min(hi, p99);
      lo = std::max(lo, -p99);
      label += " (clipped at p99)";
    }
  }
  const double extent = std::max(std::abs(lo), std::abs(hi));
  scale->axis()->setLabel(label);
  scale->setGradient(diverging_map ? diverging() : viridis());
  scale->setDataRange(diverging_map ? QCPRange(-std::max(extent, 1e-12), std::max(extent, 1e-12))
                                    : QCPRange(lo, std::max(hi, lo + 1e-12)));
}

// A map's axes over T tokens: rows top down, the mask's grey behind, no grid.
void token_axes(QCPAxisRect* rect, int T) {
  auto* x = rect->axis(QCPAxis::atBottom);
  auto* y = rect->axis(QCPAxis::atLeft);
  x->setRange(-0.5, T - 0.5);
  y->setRange(-0.5, T - 0.5);
  y->setRangeReversed(true);
  x->grid()->setVisible(false);
  y->grid()->setVisible(false);
  rect->setBackground(QBrush(QColor(238, 238, 238)));
}

// Token labels as many as fit on the maps as laid out at the page's size: every token's, else the
// step of every k-th step at its state token, with a minor tick at each token.
void fit_token_ticks(QCustomPlot& plot, const std::vector<QCPAxisRect*>& rects,
                     const std::vector<std::string>& shown, const Canvas& page) {
  for (auto* rect : rects) {
    rect->axis(QCPAxis::atBottom)
        ->setTicker(
            token_ticker(shown, 1.0, false, rect->axis(QCPAxis::atBottom)->tickLabelFont()).ticker);
    rect->axis(QCPAxis::atLeft)
        ->setTicker(
            token_ticker(shown, 1.0, false, rect->axis(QCPAxis::atLeft)->tickLabelFont()).ticker);
  }
  lay_out(plot, page);
  for (auto* rect : rects) {
    auto* xa = rect->axis(QCPAxis::atBottom);
    auto* ya = rect->axis(QCPAxis::atLeft);
    const auto [x_by_step, y_by_step] = set_token_ticks(rect, shown);
    if (x_by_step && !xa->label().isEmpty()) xa->setLabel(xa->label() + " (step)");
    if (y_by_step && !ya->label().isEmpty()) ya->setLabel(ya->label() + " (step)");
  }
}

}  // namespace

std::pair<QString, QString> distinguishing_names(const QString& a, const QString& b) {
  qsizetype shared = 0;
  while (shared < std::min(a.size(), b.size()) && a[shared] == b[shared]) ++shared;
  shared = a.left(shared).lastIndexOf('-') + 1;
  if (shared <= 0 || shared >= a.size() || shared >= b.size()) return {a, b};
  return {a.mid(shared), b.mid(shared)};
}

std::pair<bool, bool> set_token_ticks(QCPAxisRect* rect, const std::vector<std::string>& labels) {
  const double T = std::max<double>(1.0, static_cast<double>(labels.size()));
  auto* xa = rect->axis(QCPAxis::atBottom);
  auto* ya = rect->axis(QCPAxis::atLeft);
  const auto x = token_ticker(labels, rect->width() / T, true, xa->tickLabelFont());
  const auto y = token_ticker(labels, rect->height() / T, false, ya->tickLabelFont());
  xa->setTicker(x.ticker);
  ya->setTicker(y.ticker);
  xa->setTickLabelRotation(x.by_step ? 0 : 90);
  return {x.by_step, y.by_step};
}

namespace {

// ---------------------------------------------------------------------------------------------
// [SECTION] Heatmaps and grids

FigureStyle plot_heatmap(QCustomPlot& plot, const analysis::TokenMatrix& m,
                         const std::vector<std::string>& labels, bool diverging_map,
                         const QString& colour_label, const FigureStyle& style) {
  FigureStyle s = style;
  if (s.height <= 0) s.height = s.width * 0.85;  // maps are nearly square
  style_plot(plot, s);
  auto* map = new QCPColorMap(plot.xAxis, plot.yAxis);
  double lo = 0.0, hi = 0.0;
  auto seen = fill_token_map(map, m, labels, lo, hi);
  auto* scale = beside_scale(plot, s);
  map->setColorScale(scale);  // the map takes its gradient and range from its scale
  set_map_range(scale, diverging_map, lo, hi, std::move(seen), colour_label);
  token_axes(plot.axisRect(), m.tokens);
  label_axes(plot, s, "key", "query");
  const std::vector<std::string> shown(
      labels.begin(),
      labels.begin() + std::min<std::size_t>(labels.size(), static_cast<std::size_t>(m.tokens)));
  fit_token_ticks(plot, {plot.axisRect()}, shown, canvas(s));
  return s;
}

// value^power with its sign: where a power scale puts a value.
double powered(double v, double power) {
  return power == 1.0 ? v : std::copysign(std::pow(std::abs(v), power), v);
}

// The colour bar of a power scale, labelled in the values themselves: 0, the top, and round
// values in [lo, hi] (decades first, then 5 and 2 a decade, the largest first), placed at
// value^power, each at least `gap` of the bar's length from the others.
QSharedPointer<QCPAxisTickerText> power_ticker(double lo, double hi, double power, double gap) {
  std::vector<double> kept, candidates;
  if (lo <= 0.0 && hi >= 0.0) kept.push_back(0.0);
  // The top itself, where no round value is (a ratio of 1.72): the bar's end has its number.
  if (hi > 0.0) kept.push_back(hi);
  const double most = std::max(std::abs(lo), std::abs(hi));
  if (most > 0.0) {
    const int top = static_cast<int>(std::ceil(std::log10(most)));
    for (int e = top - 6; e <= top; ++e)
      for (const double m : {1.0, 2.0, 5.0})
        for (const double sign : {1.0, -1.0}) {
          const double v = sign * m * std::pow(10.0, e);
          if (v >= lo && v <= hi) candidates.push_back(v);
        }
  }
  // Decades first, then fives, then twos; each the largest first.
  const auto rank = [](double v) {
    const double m = std::abs(v) / std::pow(10.0, std::floor(std::log10(std::abs(v)) + 1e-9));
    return m < 1.5 ? 0 : m > 3.5 ? 1 : 2;
  };
  std::sort(candidates.begin(), candidates.end(), [&](double a, double b) {
    if (rank(a) != rank(b)) return rank(a) < rank(b);
    return std::abs(a) > std::abs(b);
  });
  const double apart = gap * (powered(hi, power) - powered(lo, power));
  for (const double v : candidates) {
    const double at = powered(v, power);
    if (std::all_of(kept.begin(), kept.end(),
                    [&](double k) { return std::abs(powered(k, power) - at) >= apart; }))
      kept.push_back(v);
  }
  QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
  for (const double v : kept) ticker->addTick(powered(v, power), QString::number(v, 'g', 3));
  return ticker;
}

// The share of a colour bar's length that one of its tick labels needs, with room around it.
double tick_label_share(const QCPColorScale* scale) {
  const double length = scale->axis()->axisRect()->height();
  const double label = QFontMetricsF(scale->axis()->tickLabelFont()).height();
  return length > 0.0 ? std::clamp(1.3 * label / length, 0.04, 0.5) : 0.09;
}

// Rows named "<group> <part>" ("L1 R", "L1 s", "L2 R"): the rows after which the group changes,
// where a line keeps the groups apart. None unless every row has a group and some group has more
// than one row.
std::vector<int> row_group_ends(const std::vector<std::string>& rows) {
  std::vector<std::string> groups;
  for (const auto& r : rows) {
    const auto space = r.find(' ');
    if (space == std::string::npos || space == 0) return {};
    groups.push_back(r.substr(0, space));
  }
  std::vector<int> ends;
  for (std::size_t i = 1; i < groups.size(); ++i)
    if (groups[i] != groups[i - 1]) ends.push_back(static_cast<int>(i) - 1);
  if (ends.size() + 1 == groups.size()) return {};  // a group a row: nothing to keep apart
  return ends;
}

// A grid of labelled rows and columns (layer x token, layer x head): blank where a cell is NaN,
// the columns thinned to steps as a token axis is when they do not all fit. Each cell is a number
// to read off, so the colours span every value (no clipping), on the figure's power scale.
FigureStyle plot_grid(QCustomPlot& plot, const analysis::AnalysisFigure& f,
                      const FigureStyle& style) {
  FigureStyle s = style;
  const int rows = static_cast<int>(f.row_labels.size()), cols = static_cast<int>(f.labels.size());
  if (static_cast<std::size_t>(rows) * cols != f.cells.size())
    throw std::invalid_argument("a grid needs one cell for each row and column");
  // A few layers make a band, many a square; room for a title and column labels either way.
  if (s.height <= 0) s.height = s.width * std::clamp(0.4 + 0.06 * rows, 0.6, 0.9);
  style_plot(plot, s);
  auto* map = new QCPColorMap(plot.xAxis, plot.yAxis);
  map->data()->setSize(std::max(cols, 1), std::max(rows, 1));
  map->data()->setRange(QCPRange(0, std::max(cols - 1, 0)), QCPRange(0, std::max(rows - 1, 0)));
  map->setInterpolate(false);
  const double power = f.colour_power > 0.0 && std::isfinite(f.colour_power) ? f.colour_power : 1.0;
  double lo = 0.0, hi = 0.0;
  std::vector<double> seen;
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) {
      const double v = f.cells[static_cast<std::size_t>(i) * cols + j];
      map->data()->setCell(j, i, powered(v, power));
      if (std::isnan(v)) continue;
      lo = std::min(lo, v), hi = std::max(hi, v);
      seen.push_back(std::abs(v));
    }
  auto* scale = beside_scale(plot, s);
  map->setColorScale(scale);
  if (seen.empty()) hi = 1.0;  // every cell blank: a plain scale, not one 1e-12 wide
  // A span the figure asks for (fractions: 0 to 1) holds every value too.
  if (std::isfinite(f.colour_from)) lo = std::min(lo, f.colour_from);
  if (std::isfinite(f.colour_to)) hi = std::max(hi, f.colour_to);
  QString colour_label = QString::fromStdString(f.colour_label);
  if (power != 1.0)
    colour_label += power == 0.5 ? QStringLiteral("\n(square-root scale)")
                                 : QStringLiteral("\n(colour by value^%1)").arg(power);
  if (f.diverging) {
    const double extent = std::max(std::abs(lo), std::abs(hi));
    lo = -extent, hi = extent;
  }
  set_map_range(scale, f.diverging, powered(lo, power), powered(hi, power), std::move(seen),
                colour_label, /*clip=*/false);
  if (power != 1.0) scale->axis()->setTicker(power_ticker(lo, hi, power, 0.09));
  auto* rect = plot.axisRect();
  auto* x = rect->axis(QCPAxis::atBottom);
  auto* y = rect->axis(QCPAxis::atLeft);
  x->setRange(-0.5, cols - 0.5);
  y->setRange(-0.5, rows - 0.5);
  y->setRangeReversed(true);
  x->grid()->setVisible(false);
  y->grid()->setVisible(false);
  rect->setBackground(QBrush(QColor(238, 238, 238)));
  label_axes(plot, s, s.x_title, s.y_title);
  QSharedPointer<QCPAxisTickerText> row_ticks(new QCPAxisTickerText);
  for (int i = 0; i < rows; ++i)
    row_ticks->addTick(i, QString::fromStdString(f.row_labels[static_cast<std::size_t>(i)]));
  y->setTicker(row_ticks);
  x->setTicker(token_ticker(f.labels, 1.0, false, x->tickLabelFont()).ticker);
  lay_out(plot, canvas(s));
  const double per_column = rect->width() / std::max(1.0, static_cast<double>(cols));
  const auto ticks = token_ticker(f.labels, per_column, true, x->tickLabelFont());
  x->setTicker(ticks.ticker);
  // Columns such as "H1" and "MLP" read level when each fits in its column.
  const QFontMetricsF metrics(x->tickLabelFont());
  double widest = 0.0;
  for (const auto& l : f.labels)
    widest = std::max(widest, metrics.horizontalAdvance(QString::fromStdString(l)));
  const bool level = ticks.by_step || widest < 0.9 * per_column;
  x->setTickLabelRotation(level ? 0 : 90);
  // Columns of tokens thinned to their steps say so; columns of steps already are.
  const bool steps = std::all_of(f.labels.begin(), f.labels.end(), is_step_number);
  if (ticks.by_step && !steps && !x->label().isEmpty()) x->setLabel(x->label() + " (step)");
  // The colour bar's labels as many as its length holds, now that it has one.
  if (power != 1.0) scale->axis()->setTicker(power_ticker(lo, hi, power, tick_label_share(scale)));
  // A white line between groups of rows (a layer's R, s and a).
  for (const int end : row_group_ends(f.row_labels)) {
    auto* line = new QCPItemStraightLine(&plot);
    line->point1->setCoords(0, end + 0.5);
    line->point2->setCoords(1, end + 0.5);
    line->setPen(QPen(Qt::white, 2.0 * frame_width(s)));
  }
  lay_out(plot, canvas(s));
  return s;
}

FigureStyle plot_heatmap_pair(QCustomPlot& plot, const analysis::TokenMatrix& a,
                              const analysis::TokenMatrix& b,
                              const std::vector<std::string>& labels, const QString& title_a,
                              const QString& title_b, const QString& colour_label,
                              const FigureStyle& style) {
  if (a.tokens != b.tokens)
    throw std::invalid_argument("two maps side by side need the same tokens");
  FigureStyle s = style;
  if (s.height <= 0) s.height = s.width * 0.6;  // two nearly square maps and their titles
  style_plot(plot, s);
  auto* rect_a = plot.axisRect();
  auto* scale = beside_scale(plot, s);
  // The second map between the first and the colour scale, on the same scale and margins.
  auto* row = qobject_cast<QCPLayoutGrid*>(rect_a->layout());
  row->take(scale);
  row->simplify();
  auto* rect_b = new QCPAxisRect(&plot);
  row->addElement(0, 1, rect_b);
  row->addElement(0, 2, scale);
  row->setColumnStretchFactors({1.0, 1.0, 0.001});
  row->setColumnSpacing(static_cast<int>(std::lround(0.6 * font_of(s, s.tickFont()).pixelSize())));
  rect_b->setMinimumMargins(rect_a->minimumMargins());
  rect_b->setMarginGroup(QCP::msBottom | QCP::msTop, rect_a->marginGroup(QCP::msTop));
  for (auto* rect : {rect_a, rect_b})
    for (auto* axis : rect->axes()) style_axis(axis, s);
  double lo = 0.0, hi = 0.0;
  auto* map_a = new QCPColorMap(rect_a->axis(QCPAxis::atBottom), rect_a->axis(QCPAxis::atLeft));
  auto* map_b = new QCPColorMap(rect_b->axis(QCPAxis::atBottom), rect_b->axis(QCPAxis::atLeft));
  auto seen = fill_token_map(map_a, a, labels, lo, hi);
  const auto seen_b = fill_token_map(map_b, b, labels, lo, hi);
  seen.insert(seen.end(), seen_b.begin(), seen_b.end());
  map_a->setColorScale(scale);
  map_b->setColorScale(scale);
  set_map_range(scale, false, lo, hi, std::move(seen), colour_label);
  // Each map's model above it; the query labels once, on the left.
  for (auto [rect, title] : {std::pair{rect_a, title_a}, std::pair{rect_b, title_b}}) {
    token_axes(rect, a.tokens);
    auto* top = rect->axis(QCPAxis::atTop);
    top->setVisible(true);
    top->setTicks(false);
    top->setTickLabels(false);
    top->setBasePen(Qt::NoPen);
    top->setLabelPadding(2);
    top->setLabel(title);
  }
  label_axes(plot, s, "key", "query");
  rect_b->axis(QCPAxis::atBottom)->setLabel(plot.xAxis->label());
  rect_b->axis(QCPAxis::atLeft)->setTickLabels(false);
  // The two maps equally wide: the first's column also holds the query labels.
  const auto equal_maps = [&] {
    lay_out(plot, canvas(s));
    const double ma = rect_a->margins().left() + rect_a->margins().right(),
                 mb = rect_b->margins().left() + rect_b->margins().right();
    const double inner =
        std::max(1.0, (rect_a->outerRect().width() + rect_b->outerRect().width() - ma - mb) / 2.0);
    row->setColumnStretchFactors({inner + ma, inner + mb, 0.001 * inner});
    lay_out(plot, canvas(s));
  };
  equal_maps();
  const std::vector<std::string> shown(
      labels.begin(),
      labels.begin() + std::min<std::size_t>(labels.size(), static_cast<std::size_t>(a.tokens)));
  fit_token_ticks(plot, {rect_a, rect_b}, shown, canvas(s));
  equal_maps();
  // Names that begin alike (runs of one dataset) are told apart by the rest.
  const auto [name_a, name_b] = distinguishing_names(title_a, title_b);
  // A model's name over its map in at most three lines, broken after a hyphen; a longer one keeps
  // its end (variant, seed and date tell runs apart), shortened at the start of its last line.
  for (auto [rect, title] : {std::pair{rect_a, name_a}, std::pair{rect_b, name_b}}) {
    auto* top = rect->axis(QCPAxis::atTop);
    const QFontMetricsF metrics(top->labelFont());
    const double width = 0.95 * rect->width();
    QStringList lines = wrapped_text(title, top->labelFont(), width).split('\n');
    if (lines.size() > 3)
      lines = QStringList{lines[0], lines[1],
                          metrics.elidedText(title.mid(lines[0].size() + lines[1].size()).trimmed(),
                                             Qt::ElideLeft, width)};
    for (auto& line : lines) line = metrics.elidedText(line, Qt::ElideMiddle, width);
    top->setLabel(lines.join('\n'));
  }
  return s;
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Lines and bars

void plot_lines(QCustomPlot& plot, const std::vector<Series>& series, const QString& x_label,
                const QString& y_label, const FigureStyle& style, const QString& right_label,
                const std::vector<std::pair<QString, double>>& references, bool log_x) {
  style_plot(plot, style);
  for (std::size_t k = 0; k < series.size(); ++k) {
    const auto& sr = series[k];
    const QColor colour = categorical()[k % categorical().size()];
    QVector<double> x(sr.x.begin(), sr.x.end()), y(sr.y.begin(), sr.y.end());
    if (!sr.low.empty() && sr.low.size() == sr.x.size()) {
      auto* low = plot.addGraph(plot.xAxis, sr.right_axis ? plot.yAxis2 : plot.yAxis);
      low->setData(x, QVector<double>(sr.low.begin(), sr.low.end()));
      low->setPen(Qt::NoPen);
      low->removeFromLegend();
      auto* high = plot.addGraph(plot.xAxis, sr.right_axis ? plot.yAxis2 : plot.yAxis);
      high->setData(x, QVector<double>(sr.high.begin(), sr.high.end()));
      high->setPen(Qt::NoPen);
      QColor fill = colour;
      fill.setAlpha(50);
      high->setBrush(fill);
      high->setChannelFillGraph(low);
      high->removeFromLegend();
    }
    auto* g = plot.addGraph(plot.xAxis, sr.right_axis ? plot.yAxis2 : plot.yAxis);
    g->setData(x, y);
    QPen pen(colour, style.line_width);
    if (k % 2 == 1) pen.setStyle(Qt::DashLine);  // readable in black and white
    g->setPen(pen);
    if (sr.x.size() <= 30)
      g->setScatterStyle(
          QCPScatterStyle(k % 2 ? QCPScatterStyle::ssSquare : QCPScatterStyle::ssCircle, colour,
                          2.5 * style.line_width));
    g->setName(sr.name);
  }
  for (const auto& [name, value] : references) {
    auto* line = new QCPItemStraightLine(&plot);
    line->point1->setCoords(0, value);
    line->point2->setCoords(1, value);
    line->setPen(QPen(colors::kGrey, 0.67 * style.line_width, Qt::DotLine));
    auto* text = new QCPItemText(&plot);
    // A little right of the axis, whatever its scale, above the line.
    text->position->setTypeX(QCPItemPosition::ptAxisRectRatio);
    text->position->setTypeY(QCPItemPosition::ptPlotCoords);
    text->position->setCoords(0.02, value);
    text->setPositionAlignment(
        Qt::AlignLeft |
        Qt::AlignBottom);  // above the line, where curves rarely go; room is made below
    text->setText(name);
    text->setFont(font_of(style, style.tickFont()));
    text->setColor(colors::kGrey);
  }
  if (log_x) {
    plot.xAxis->setScaleType(QCPAxis::stLogarithmic);
    // Ticks where the data are, written compactly (1.8k, 36k).
    QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
    if (!series.empty())
      for (double v : series.front().x) {
        const QString t = std::abs(v) >= 1000 ? QString::number(v / 1000.0, 'g', 3) + "k"
                                              : QString::number(v, 'g', 3);
        ticker->addTick(v, t);
      }
    plot.xAxis->setTicker(ticker);
  }
  label_axes(plot, style, x_label, y_label);
  if (!right_label.isEmpty()) {
    plot.yAxis2->setVisible(true);
    plot.yAxis2->setLabel(right_label);
  }
  plot.rescaleAxes();
  if (!right_label.isEmpty()) plot.yAxis2->scaleRange(1.08, plot.yAxis2->range().center());
  for (const auto& [name, value] : references) {
    const auto r = plot.yAxis->range();
    plot.yAxis->setRange(std::min(r.lower, value), std::max(r.upper, value));
  }
  {
    // A flat curve gets a span its tick labels can tell apart, not one of float noise.
    const auto r = plot.yAxis->range();
    const double least = std::max(1e-3 * std::abs(r.center()), 1e-9);
    if (r.size() < least) plot.yAxis->setRange(r.center() - least / 2, r.center() + least / 2);
  }
  // Markers (30 points or fewer) need more room at the top and bottom than a bare line.
  bool markers = false;
  for (const auto& sr : series) markers |= sr.x.size() <= 30;
  plot.yAxis->scaleRange(markers ? 1.14 : 1.08, plot.yAxis->range().center());
  for (const auto& [name, value] : references) {  // headroom for the label above each line
    const auto r = plot.yAxis->range();
    plot.yAxis->setRange(r.lower, std::max(r.upper, value + 0.12 * r.size()));
  }
  // Room at both ends, so the markers on the first and last points stay whole.
  if (!log_x) {
    plot.xAxis->scaleRange(1.04, plot.xAxis->range().center());
  } else if (const auto r = plot.xAxis->range(); r.lower > 0 && r.upper > r.lower) {
    const double pad = std::pow(r.upper / r.lower, 0.04);
    plot.xAxis->setRange(r.lower / pad, r.upper * pad);
  }
  if (series.size() > 1) legend_below(plot, style);
}

// How far a bar's whisker reaches below and above its top: its interval, or -/+ its spread.
std::pair<double, double> bar_whiskers(const Bar& bar) {
  if (std::isfinite(bar.low) && std::isfinite(bar.high))
    return {std::max(0.0, bar.mean - bar.low), std::max(0.0, bar.high - bar.mean)};
  const double spread = std::isfinite(bar.spread) ? bar.spread : 0.0;
  return {spread, spread};
}

void plot_bars(QCustomPlot& plot, const std::vector<Bar>& bars, const QString& y_label,
               const FigureStyle& style) {
  style_plot(plot, style);
  auto* b = new QCPBars(plot.xAxis, plot.yAxis);
  b->setWidth(0.6);
  // A light fill: the whisker's lower half stands inside the bar and must show there.
  b->setPen(QPen(colors::kBlue, frame_width(style)));
  const QColor& blue = colors::kBlue;
  const auto light = [](int c) {
    return static_cast<int>(std::lround(255 - 0.45 * (255 - c)));
  };  // 45% blue on white, opaque
  b->setBrush(QColor(light(blue.red()), light(blue.green()), light(blue.blue())));
  auto* err = new QCPErrorBars(plot.xAxis, plot.yAxis);
  err->setDataPlottable(b);
  err->setPen(QPen(Qt::black, 0.67 * style.line_width));
  err->setSymbolGap(0);  // a whisker through the bar's top, not broken around it
  QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
  QVector<double> keys, values, below, above;
  double top = 0.0, bottom = 0.0;
  for (std::size_t k = 0; k < bars.size(); ++k) {
    const auto [down, up] = bar_whiskers(bars[k]);
    keys << static_cast<double>(k + 1);
    values << bars[k].mean;
    below << down;
    above << up;
    ticker->addTick(static_cast<double>(k + 1), bars[k].name);
    if (!std::isfinite(bars[k].mean)) continue;
    top = std::max(top, bars[k].mean + up);
    bottom = std::min(bottom, bars[k].mean - down);
  }
  b->setData(keys, values);
  err->setData(below, above);
  plot.xAxis->setTicker(ticker);
  plot.xAxis->grid()->setVisible(false);
  plot.xAxis->setTickLength(0, 4);  // outside: a tick inside would stand in the bar
  plot.xAxis->setRange(0.3, static_cast<double>(bars.size()) + 0.7);
  plot.yAxis->setRange(bottom * 1.1, top * 1.12 + 1e-9);
  label_axes(plot, style, {}, y_label);
}

}  // namespace

std::vector<std::string> save_lines(const std::string& base, const std::vector<Series>& series,
                                    const QString& x_label, const QString& y_label,
                                    const FigureStyle& style, const QString& right_label,
                                    const std::vector<std::pair<QString, double>>& references,
                                    bool log_x) {
  QCustomPlot plot;
  plot_lines(plot, series, x_label, y_label, style, right_label, references, log_x);
  return save_all(plot, base, style);
}

std::vector<std::string> save_bars(const std::string& base, const std::vector<Bar>& bars,
                                   const QString& y_label, const FigureStyle& style) {
  QCustomPlot plot;
  plot_bars(plot, bars, y_label, style);
  return save_all(plot, base, style);
}

double clustered_bar_width(int count) {
  return 0.8 / std::max(1, count);
}

double clustered_bar_key(int cluster, int k, int count) {
  return static_cast<double>(cluster + 1) - 0.4 +
         (static_cast<double>(k) + 0.5) * clustered_bar_width(count);
}

void add_clustered_bars(QCustomPlot& plot, const std::vector<QString>& clusters,
                        const std::vector<BarSeries>& series, double frame_width,
                        double whisker_width, const QFont& note_font) {
  const int count = static_cast<int>(series.size());
  const double width = clustered_bar_width(count);
  double top = 0.0, bottom = 0.0;
  for (int k = 0; k < count; ++k) {
    const auto& s = series[static_cast<std::size_t>(k)];
    const QColor colour = categorical()[static_cast<std::size_t>(k) % categorical().size()];
    // Finished and unfinished bars of a series are two plottables: the faint one has no legend.
    for (const bool faint : {false, true}) {
      auto* b = new QCPBars(plot.xAxis, plot.yAxis);
      b->setWidth(width);
      QColor fill = colour;
      if (faint) fill.setAlpha(70);
      b->setBrush(fill);
      b->setPen(QPen(colour.darker(130), frame_width, faint ? Qt::DashLine : Qt::SolidLine));
      b->setName(s.name);
      auto* err = new QCPErrorBars(plot.xAxis, plot.yAxis);
      err->setDataPlottable(b);
      err->setPen(QPen(faint ? QColor(110, 110, 110) : QColor(Qt::black), whisker_width));
      err->setSymbolGap(0);
      err->removeFromLegend();
      QVector<double> keys, values, below, above;
      for (std::size_t c = 0; c < s.bars.size() && c < clusters.size(); ++c) {
        const bool is_faint = c < s.faint.size() && s.faint[c];
        if (is_faint != faint || !std::isfinite(s.bars[c].mean)) continue;
        const auto [down, up] = bar_whiskers(s.bars[c]);
        keys << clustered_bar_key(static_cast<int>(c), k, count);
        values << s.bars[c].mean;
        below << down;
        above << up;
        top = std::max(top, s.bars[c].mean + up);
        bottom = std::min(bottom, s.bars[c].mean - down);
      }
      b->setData(keys, values);
      err->setData(below, above);
      if (faint) b->removeFromLegend();
    }
  }
  // The notes above the whiskers.
  for (int k = 0; k < count; ++k) {
    const auto& s = series[static_cast<std::size_t>(k)];
    for (std::size_t c = 0; c < s.bars.size() && c < s.notes.size() && c < clusters.size(); ++c) {
      if (s.notes[c].isEmpty() || !std::isfinite(s.bars[c].mean)) continue;
      const double spread = bar_whiskers(s.bars[c]).second;
      auto* note = new QCPItemText(&plot);
      note->position->setCoords(clustered_bar_key(static_cast<int>(c), k, count),
                                std::max(0.0, s.bars[c].mean) + spread);
      note->setPositionAlignment(Qt::AlignHCenter | Qt::AlignBottom);
      note->setFont(note_font);
      note->setColor(QColor(80, 80, 80));
      note->setText(s.notes[c]);
      note->setPadding(QMargins(0, 0, 0, 3));  // clear of the whisker's cap it stands on
      note->setClipToAxisRect(false);
    }
  }
  QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
  for (std::size_t c = 0; c < clusters.size(); ++c)
    ticker->addTick(static_cast<double>(c + 1), clusters[c]);
  plot.xAxis->setTicker(ticker);
  plot.xAxis->grid()->setVisible(false);
  plot.xAxis->setTickLength(0, 4);
  plot.xAxis->setRange(0.45, static_cast<double>(std::max<std::size_t>(1, clusters.size())) + 0.55);
  // Room above the tallest whisker for its note.
  const double headroom = 0.12 * (top - bottom > 0.0 ? top - bottom : 1.0);
  plot.yAxis->setRange(bottom < 0 ? bottom - headroom : 0.0, top + 1.6 * headroom);
}

namespace {

void plot_clustered_bars(QCustomPlot& plot, const std::vector<QString>& clusters,
                         const std::vector<BarSeries>& series, const QString& y_label,
                         const FigureStyle& style) {
  style_plot(plot, style);
  add_clustered_bars(plot, clusters, series, frame_width(style), 0.67 * style.line_width,
                     font_of(style, 0.8 * style.tickFont()));
  label_axes(plot, style, {}, y_label);
  if (series.size() > 1) legend_below(plot, style);
}

}  // namespace

std::vector<std::string> save_clustered_bars(const std::string& base,
                                             const std::vector<QString>& clusters,
                                             const std::vector<BarSeries>& series,
                                             const QString& y_label, const FigureStyle& style) {
  QCustomPlot plot;
  plot_clustered_bars(plot, clusters, series, y_label, style);
  return save_all(plot, base, style);
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Interval panels

namespace {

// One value axis's range for the intervals of `panel`: its fixed range, else the intervals' with a
// tenth of their span on each side (a span of nothing: a tenth of the value, or 1).
QCPRange interval_range(const IntervalPanel& panel) {
  if (std::isfinite(panel.lowest) && std::isfinite(panel.highest)) {
    const double pad = 0.04 * (panel.highest - panel.lowest);
    return {panel.lowest - pad, panel.highest + pad};
  }
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (const auto& row : panel.rows)
    for (const double v : {row.mean, row.low, row.high})
      if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
  if (std::isfinite(panel.reference)) lo = std::min(lo, panel.reference);
  if (std::isfinite(panel.reference)) hi = std::max(hi, panel.reference);
  if (!std::isfinite(lo)) return {0.0, 1.0};
  double pad = 0.1 * (hi - lo);
  if (pad <= 0.0) pad = std::max(0.1 * std::abs(lo), 1.0);
  return {lo - pad, hi + pad};
}

// The axes of a panel: its rows' names on the left (labelled when `named`), its values below.
void style_interval_axes(QCPAxisRect* rect, const IntervalPanel& panel,
                         const std::vector<QString>& names, bool named, const FigureStyle& s) {
  const int count = std::max(1, static_cast<int>(names.size()));
  for (auto* axis : rect->axes()) style_axis(axis, s);
  auto* x = rect->axis(QCPAxis::atBottom);
  auto* y = rect->axis(QCPAxis::atLeft);
  // The names top down, on the row's first panel only; no ticks across the values.
  QSharedPointer<QCPAxisTickerText> row_ticks(new QCPAxisTickerText);
  for (int k = 0; k < static_cast<int>(names.size()); ++k)
    row_ticks->addTick(k, names[static_cast<std::size_t>(k)]);
  y->setTicker(row_ticks);
  y->setRange(-0.6, count - 0.4);
  y->setRangeReversed(true);
  y->setTickLength(0, 0);
  y->setSubTicks(false);
  y->grid()->setVisible(false);
  y->setTickLabels(named);
  x->setRange(interval_range(panel));
  if (std::isfinite(panel.lowest) && std::isfinite(panel.highest)) {
    // A fixed range (a probability) reads at its ends and its middle, quarters between.
    QSharedPointer<QCPAxisTickerText> ends(new QCPAxisTickerText);
    for (const double v : {panel.lowest, (panel.lowest + panel.highest) / 2, panel.highest})
      ends->addTick(v, QString::number(v, 'g', 3));
    ends->setSubTickCount(1);
    x->setTicker(ends);
  } else {
    x->ticker()->setTickCount(3);
  }
}

// The intervals of a panel's first `rows` rows, each a bar in its name's colour with its estimate
// a line across, and the panel's reference value as a dashed line.
void draw_intervals(QCustomPlot& plot, QCPAxisRect* rect, const IntervalPanel& panel,
                    std::size_t rows, const FigureStyle& s) {
  auto* x = rect->axis(QCPAxis::atBottom);
  auto* y = rect->axis(QCPAxis::atLeft);
  for (std::size_t k = 0; k < panel.rows.size() && k < rows; ++k) {
    const auto& row = panel.rows[k];
    if (!std::isfinite(row.mean)) continue;
    const QColor colour = categorical()[k % categorical().size()];
    const double at = static_cast<double>(k);
    if (std::isfinite(row.low) && std::isfinite(row.high)) {
      auto* bar = new QCPItemRect(&plot);
      bar->setClipAxisRect(rect);
      for (auto* corner : {bar->topLeft, bar->bottomRight}) corner->setAxes(x, y);
      bar->topLeft->setCoords(row.low, at - 0.3);
      bar->bottomRight->setCoords(row.high, at + 0.3);
      QColor fill = colour;
      fill.setAlpha(200);
      bar->setBrush(fill);
      bar->setPen(QPen(colour.darker(130), frame_width(s)));
    }
    auto* estimate = new QCPItemLine(&plot);
    estimate->setClipAxisRect(rect);
    for (auto* end : {estimate->start, estimate->end}) end->setAxes(x, y);
    estimate->start->setCoords(row.mean, at - 0.36);
    estimate->end->setCoords(row.mean, at + 0.36);
    estimate->setPen(QPen(Qt::black, s.line_width));
  }
  if (std::isfinite(panel.reference)) {
    auto* line = new QCPItemStraightLine(&plot);
    line->setClipAxisRect(rect);
    for (auto* point : {line->point1, line->point2}) point->setAxes(x, y);
    line->point1->setCoords(panel.reference, 0);
    line->point2->setCoords(panel.reference, 1);
    line->setPen(QPen(colors::kGrey, 0.8 * s.line_width, Qt::DashLine));
  }
}

// The columns of `grid` stretched by the width of their panels' margins, read from the plot as
// laid out: every panel's axes as wide.
void equal_panel_widths(QCPLayoutGrid* grid, const std::vector<QCPAxisRect*>& rects, int per_row) {
  std::vector<double> margins(static_cast<std::size_t>(per_row), 0.0);
  double inner = 0.0;
  for (int c = 0; c < per_row; ++c) {
    const auto m = rects[static_cast<std::size_t>(c)]->margins();
    margins[static_cast<std::size_t>(c)] = m.left() + m.right();
    inner += rects[static_cast<std::size_t>(c)]->width();
  }
  inner /= per_row;
  QList<double> factors;
  for (const double m : margins) factors << m + inner;
  grid->setColumnStretchFactors(factors);
}

FigureStyle plot_interval_panels(QCustomPlot& plot, const std::vector<QString>& names,
                                 const std::vector<IntervalPanel>& panels, const QString& x_label,
                                 const QString& note, const FigureStyle& style) {
  FigureStyle s = style;
  const int n = std::max(1, static_cast<int>(panels.size()));
  const int per_row = std::min(n, s.width >= 5.0 ? 4 : 2);
  const int grid_rows = (n + per_row - 1) / per_row;
  const int count = std::max(1, static_cast<int>(names.size()));
  // A row of panels as tall as its names need, and room for the titles and the axis title (grown
  // below when the text needs more).
  const bool free_height = s.height <= 0;
  if (free_height)
    s.height = std::clamp(0.45 + grid_rows * (0.45 + 0.15 * count) + (note.isEmpty() ? 0.0 : 0.25),
                          0.35 * s.width, 1.2 * s.width);
  style_plot(plot, s);
  auto* layout = plot.plotLayout();
  auto* first = plot.axisRect();
  layout->take(first);
  layout->simplify();
  auto* grid = new QCPLayoutGrid;
  layout->addElement(layout->rowCount(), 0, grid);
  layout->setRowSpacing(0);  // the axis title close under the panels, as an axis's own would be
  grid->setColumnSpacing(static_cast<int>(std::lround(0.8 * font_of(s, s.tickFont()).pixelSize())));
  grid->setRowSpacing(2);
  std::vector<QCPMarginGroup*> columns(static_cast<std::size_t>(per_row));
  for (auto*& group : columns) group = new QCPMarginGroup(&plot);
  std::vector<QCPAxisRect*> rects;
  for (int p = 0; p < n; ++p) {
    const auto& panel = panels[static_cast<std::size_t>(p)];
    const int r = p / per_row, c = p % per_row;
    auto* rect = p == 0 ? first : new QCPAxisRect(&plot);
    rects.push_back(rect);
    rect->setMinimumMargins(QMargins(3, 3, 8, 3));
    // Room for the names' rows, no more: a rect's own 50 points a side would squeeze the text.
    rect->setMinimumSize(QSize(20, 6 + 9 * count));
    auto* title = new QCPTextElement(&plot, panel.title, font_of(s, s.axisFont()));
    title->setMargins(QMargins(0, 1, 0, 0));
    grid->addElement(2 * r, c, title);
    grid->addElement(2 * r + 1, c, rect);
    rect->setMarginGroup(QCP::msLeft | QCP::msRight, columns[static_cast<std::size_t>(c)]);
    style_interval_axes(rect, panel, names, c == 0, s);
    draw_intervals(plot, rect, panel, names.size(), s);
  }
  // The panels of a row share their top and bottom.
  for (int r = 0; r < grid_rows; ++r) {
    auto* group = new QCPMarginGroup(&plot);
    for (int p = r * per_row; p < std::min(n, (r + 1) * per_row); ++p)
      rects[static_cast<std::size_t>(p)]->setMarginGroup(QCP::msTop | QCP::msBottom, group);
  }
  if (!x_label.isEmpty()) {
    auto* title = new QCPTextElement(&plot, x_label, font_of(s, s.axisFont()));
    title->setMargins(QMargins(0, 0, 0, 2));
    const int row = layout->rowCount();
    layout->addElement(row, 0, title);
    layout->setRowStretchFactor(row, 0.001);
  }
  add_note(plot, s, note);
  for (int r = 0; r < layout->rowCount(); ++r)
    if (layout->element(r, 0) != grid) layout->setRowStretchFactor(r, 0.001);
  // A height left to the figure holds every text whole.
  lay_out(plot, canvas(s));
  const double needed = layout->minimumOuterSizeHint().height() + 2.0;
  if (free_height && needed > canvas(s).height) s.height = needed / 72.0;
  // Panels equally wide inside their axes: the first column's names take room of their own.
  lay_out(plot, canvas(s));
  equal_panel_widths(grid, rects, per_row);
  return s;
}

}  // namespace

std::vector<std::string> save_interval_panels(const std::string& base,
                                              const std::vector<QString>& names,
                                              const std::vector<IntervalPanel>& panels,
                                              const QString& x_label, const QString& note,
                                              const FigureStyle& style) {
  QCustomPlot plot;
  const FigureStyle s = plot_interval_panels(plot, names, panels, x_label, note, style);
  return save_all(plot, base, s);
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Scatters and saved maps

namespace {

FigureStyle plot_scatter(QCustomPlot& plot, const std::vector<ScatterGroup>& groups,
                         const FigureStyle& style, const QString& x_label, const QString& y_label) {
  FigureStyle s = style;
  if (s.height <= 0) s.height = s.width;
  style_plot(plot, s);
  for (std::size_t k = 0; k < groups.size(); ++k) {
    auto* g = plot.addGraph();
    // Unsorted keys (the graph sorts them) and no adaptive sampling: every point is drawn.
    g->setData(QVector<double>(groups[k].x.begin(), groups[k].x.end()),
               QVector<double>(groups[k].y.begin(), groups[k].y.end()));
    g->setAdaptiveSampling(false);
    g->setLineStyle(QCPGraph::lsNone);
    QColor colour =
        groups[k].colour.isValid() ? groups[k].colour : categorical()[k % categorical().size()];
    colour.setAlpha(170);
    const QCPScatterStyle::ScatterShape shapes[] = {
        QCPScatterStyle::ssDisc, QCPScatterStyle::ssTriangle, QCPScatterStyle::ssSquare,
        QCPScatterStyle::ssDiamond, QCPScatterStyle::ssCross};
    const auto marker = groups[k].marker;
    auto shape = marker == Marker::Automatic ? shapes[k % 5] : shapes[static_cast<int>(marker) - 1];
    if (shape == QCPScatterStyle::ssDisc)
      shape = QCPScatterStyle::ssCircle;  // a disc takes the pen's colour, a circle the brush's
    // Filled markers without an outline: a translucent outline would draw a ring at 600 dpi. (A
    // Qt::NoPen pen would mean "the graph's pen" to QCustomPlot, hence a transparent one.)
    g->setScatterStyle(QCPScatterStyle(
        shape,
        shape == QCPScatterStyle::ssCross ? QPen(colour, s.line_width) : QPen(Qt::transparent),
        QBrush(colour), 1.7 * s.line_width + 0.5));
    g->setName(groups[k].name);
  }
  plot.rescaleAxes();
  plot.xAxis->scaleRange(1.05, plot.xAxis->range().center());
  plot.yAxis->scaleRange(1.05, plot.yAxis->range().center());
  label_axes(plot, s, x_label, y_label);
  // Embedding axes (t-SNE) carry no units: no tick labels, no grid.
  if (plot.xAxis->label().isEmpty() && plot.yAxis->label().isEmpty()) unitless_axes(plot);
  if (groups.size() > 1) legend_below(plot, style);
  return s;
}

}  // namespace

std::vector<std::string> save_heatmap(const std::string& base, const analysis::TokenMatrix& m,
                                      const std::vector<std::string>& labels, bool diverging_map,
                                      const QString& colour_label, const FigureStyle& style) {
  QCustomPlot plot;
  const FigureStyle s = plot_heatmap(plot, m, labels, diverging_map, colour_label, style);
  return save_all(plot, base, s);
}

std::vector<std::string> save_heatmap_pair(const std::string& base, const analysis::TokenMatrix& a,
                                           const analysis::TokenMatrix& b,
                                           const std::vector<std::string>& labels,
                                           const QString& title_a, const QString& title_b,
                                           const QString& colour_label, const FigureStyle& style) {
  QCustomPlot plot;
  const FigureStyle s =
      plot_heatmap_pair(plot, a, b, labels, title_a, title_b, colour_label, style);
  return save_all(plot, base, s);
}

std::vector<std::string> save_scatter(const std::string& base,
                                      const std::vector<ScatterGroup>& groups,
                                      const FigureStyle& style, const QString& x_label,
                                      const QString& y_label) {
  QCustomPlot plot;
  const FigureStyle s = plot_scatter(plot, groups, style, x_label, y_label);
  return save_all(plot, base, s);
}

std::vector<std::string> save_value_scatter(const std::string& base, const std::vector<double>& x,
                                            const std::vector<double>& y,
                                            const std::vector<double>& value,
                                            const QString& colour_label, const FigureStyle& style) {
  QCustomPlot plot;
  FigureStyle s = style;
  if (s.height <= 0) s.height = s.width * 0.85;
  style_plot(plot, s);
  const auto n = std::min({x.size(), y.size(), value.size()});
  double lo = 1e300, hi = -1e300;
  for (std::size_t i = 0; i < n; ++i) lo = std::min(lo, value[i]), hi = std::max(hi, value[i]);
  if (n == 0) lo = 0.0, hi = 1.0;
  if (hi <= lo) hi = lo + 1.0;
  // One graph per colour band of the map: a few dozen graphs instead of one per point.
  QCPColorGradient gradient = viridis();  // color() is not const
  const QCPRange range(lo, hi);
  constexpr int kBands = 32;
  std::vector<QVector<double>> bx(kBands), by(kBands);
  for (std::size_t i = 0; i < n; ++i) {
    const int band =
        std::clamp(static_cast<int>((value[i] - lo) / (hi - lo) * kBands), 0, kBands - 1);
    bx[static_cast<std::size_t>(band)] << x[i];
    by[static_cast<std::size_t>(band)] << y[i];
  }
  for (int b = 0; b < kBands; ++b) {
    if (bx[static_cast<std::size_t>(b)].isEmpty()) continue;
    auto* g = plot.addGraph();
    g->setData(bx[static_cast<std::size_t>(b)], by[static_cast<std::size_t>(b)]);
    g->setAdaptiveSampling(false);
    g->setLineStyle(QCPGraph::lsNone);
    QColor colour = QColor::fromRgb(gradient.color(lo + (b + 0.5) * (hi - lo) / kBands, range));
    colour.setAlpha(190);
    g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, QPen(Qt::transparent),
                                       QBrush(colour), 1.7 * s.line_width + 0.5));
  }
  auto* scale = beside_scale(plot, s);
  scale->setGradient(gradient);
  scale->setDataRange(range);
  scale->axis()->setLabel(colour_label);
  plot.rescaleAxes();
  plot.xAxis->scaleRange(1.05, plot.xAxis->range().center());
  plot.yAxis->scaleRange(1.05, plot.yAxis->range().center());
  label_axes(plot, s, {}, {});
  if (plot.xAxis->label().isEmpty() && plot.yAxis->label().isEmpty()) unitless_axes(plot);
  return save_all(plot, base, s);
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Export
// Every tab's figure with its recipe, written whole or not at all.

FigureStyle with_defaults(FigureStyle style, const FigureText& text) {
  if (!style.show_title)
    style.title.clear();
  else if (style.title.isEmpty())
    style.title = text.title;
  if (style.x_title.isEmpty()) style.x_title = text.x_title;
  if (style.y_title.isEmpty()) style.y_title = text.y_title;
  return style;
}

std::optional<FigureRecipe> FigureSource::figureRecipe() const {
  if (!figure_recipe_maker_ || !hasFigure()) return std::nullopt;
  auto recipe = figure_recipe_maker_();
  if (!recipe) return std::nullopt;
  recipe->figure = recipe_figure({}, FigureStyle{});
  recipe->figure.name = figureName().toStdString();
  recipe->created = recipe_time_now();
  return recipe;
}

RecipeFigure recipe_figure(const std::string& preset, const FigureStyle& style) {
  RecipeFigure f;
  f.preset = preset;
  copy_size_and_fonts(f, style);
  f.font_family = style.font_family.toStdString();
  if (style.pdf) f.formats.push_back("pdf");
  if (style.svg) f.formats.push_back("svg");
  if (style.png) f.formats.push_back("png");
  f.show_title = style.show_title;
  f.title = style.title.toStdString();
  f.x_title = style.x_title.toStdString();
  f.y_title = style.y_title.toStdString();
  return f;
}

FigureStyle figure_style(const RecipeFigure& f, const std::string& format) {
  FigureStyle s;
  copy_size_and_fonts(s, f);
  s.font_family = QString::fromStdString(f.font_family);
  s.show_title = f.show_title;
  s.title = QString::fromStdString(f.title);
  s.x_title = QString::fromStdString(f.x_title);
  s.y_title = QString::fromStdString(f.y_title);
  s.pdf = format == "pdf";
  s.svg = format == "svg";
  s.png = format == "png";
  return s;
}

namespace {

// export_with_recipes, writing where it is told.
std::vector<std::string> export_in_place(const FigureSource& source, const std::string& base,
                                         const FigureStyle& style, const std::string& preset) {
  auto written = source.exportFigure(base, style);
  const auto made = written.empty() ? std::nullopt : source.figureRecipe();
  if (!made) return written;
  // One recipe a figure: the stems of the drawings, each with every file of its stem.
  namespace fs = std::filesystem;
  std::vector<std::string> stems;
  for (const auto& path : written) {
    const auto ext = fs::path(path).extension().string();
    if (ext != ".pdf" && ext != ".svg" && ext != ".png") continue;
    const auto stem = fs::path(path).replace_extension().string();
    if (std::find(stems.begin(), stems.end(), stem) == stems.end()) stems.push_back(stem);
  }
  const auto time = recipe_time_now();
  for (const auto& stem : stems) {
    FigureRecipe recipe = *made;
    recipe.figure = recipe_figure(preset, style);
    recipe.figure.name = source.figureName().toStdString() +
                         (stem.size() > base.size() && stem.compare(0, base.size(), base) == 0
                              ? stem.substr(base.size())
                              : std::string());
    for (const auto& path : written)
      if (fs::path(path).replace_extension().string() == stem)
        recipe.outputs.push_back(fs::path(path).filename().string());
    recipe.created = time;
    write_figure_recipe(stem + ".recipe.json", recipe);
    written.push_back(stem + ".recipe.json");
  }
  return written;
}

// Runs `write` on a hidden folder inside `dir`, then moves every file it wrote into `dir` by the
// same relative path, all as one AtomicFileGroup: an export is written whole, or not at all and
// the files it would have replaced are kept. A recipe is written again where it lands, so that its
// paths are relative to its own folder (write_figure_recipe).
std::vector<std::string> staged_in(
    const std::filesystem::path& dir,
    const std::function<std::vector<std::string>(const std::filesystem::path&)>& write) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw Error(dir.string() + ": cannot make the folder (" + ec.message() + ")");
  const fs::path staging = dir / (".dstudio-export-" + std::to_string(::getpid()));
  fs::remove_all(staging, ec);
  struct Removed {
    fs::path folder;
    ~Removed() {
      std::error_code e;
      fs::remove_all(folder, e);
    }
  } removed{staging};
  fs::create_directories(staging, ec);
  if (ec) throw Error(staging.string() + ": cannot make the folder (" + ec.message() + ")");
  const auto written = write(staging);
  AtomicFileGroup group;
  std::vector<std::string> out;
  for (const auto& file : written) {
    const fs::path target = dir / fs::path(file).lexically_relative(staging);
    fs::create_directories(target.parent_path(), ec);
    const fs::path temp = group.add(target);
    if (file.size() > 12 && file.compare(file.size() - 12, 12, ".recipe.json") == 0) {
      write_figure_recipe(temp, read_figure_recipe(file));
    } else {
      fs::rename(file, temp, ec);
      if (ec) throw Error(target.string() + ": cannot be written (" + ec.message() + ")");
    }
    out.push_back(target.string());
  }
  group.commit();
  return out;
}

}  // namespace

std::vector<std::string> export_with_recipes(const FigureSource& source, const std::string& base,
                                             const FigureStyle& style, const std::string& preset) {
  const std::filesystem::path path(base);
  return staged_in(path.parent_path().empty() ? std::filesystem::path(".") : path.parent_path(),
                   [&](const std::filesystem::path& staging) {
                     return export_in_place(source, (staging / path.filename()).string(), style,
                                            preset);
                   });
}

std::vector<std::string> export_all(const std::vector<const FigureSource*>& sources,
                                    const std::string& dir, const FigureStyle& style,
                                    const std::string& preset) {
  return staged_in(dir, [&](const std::filesystem::path& staging) {
    std::vector<std::string> written;
    for (const auto* source : sources) {
      if (!source || !source->hasFigure()) continue;
      const auto folder = staging / source->exportFolder().toStdString();
      std::error_code ec;
      std::filesystem::create_directories(folder, ec);
      const auto base = (folder / source->figureName().toStdString()).string();
      for (auto& f : export_in_place(*source, base, style, preset)) written.push_back(std::move(f));
    }
    return written;
  });
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Venue presets

std::vector<FigurePreset> venue_presets() {
  const auto preset = [](const char* slug, const char* name, double width, double height,
                         double font, double tick, const char* family, int dpi) {
    FigureStyle s;
    s.width = width;
    s.height = height;
    s.font = font;
    s.axis_font = font;
    s.tick_font = tick;
    s.font_family = QString::fromLatin1(family);
    s.dpi = dpi;
    s.line_width = font < 8 ? 1.0 : 1.2;  // thinner lines with Nature's smaller text
    return FigurePreset{QString::fromUtf8(name), s, QString::fromLatin1(slug)};
  };
  // Heights are left to the figure (0: a line plot the width over the golden ratio, a map or an
  // embedding squarer) unless the venue fixes them (IEEE's 2.5 in).
  return {
      preset("icml", "ICML column (3.25 in)", 3.25, 0, 8, 7, kSansFamily, 300),
      preset("icml-page", "ICML page (6.75 in)", 6.75, 0, 9, 8, kSansFamily, 300),
      preset("neurips", "NeurIPS / ICLR (5.5 in)", 5.5, 0, 9, 8, kSansFamily, 300),
      preset("aaai", "AAAI column (3.3 in)", 3.3, 0, 8, 7, kSansFamily, 300),
      preset("aaai-page", "AAAI page (6.975 in)", 6.975, 0, 9, 8, kSansFamily, 300),
      preset("cvpr", "CVPR column (3.25 in)", 3.25, 0, 8, 7, kSansFamily, 300),
      preset("cvpr-page", "CVPR page (6.875 in)", 6.875, 0, 9, 8, kSansFamily, 300),
      preset("ieee", "IEEE column (3.3 × 2.5 in, serif)", 3.3, 2.5, 8, 8, kSerifFamily, 600),
      preset("nature", "Nature single column (89 mm)", 89.0 / 25.4, 0, 7, 6, kSansFamily, 600),
      preset("nature-page", "Nature double column (183 mm)", 183.0 / 25.4, 0, 7, 6, kSansFamily,
             600),
  };
}

std::vector<std::string> venue_preset_slugs() {
  std::vector<std::string> slugs;
  for (const auto& p : venue_presets()) slugs.push_back(p.slug.toStdString());
  return slugs;
}

int venue_preset_index(const std::string& name) {
  const QString wanted = QString::fromStdString(name).trimmed();
  const auto presets = venue_presets();
  for (std::size_t k = 0; k < presets.size(); ++k)
    if (wanted.compare(presets[k].slug, Qt::CaseInsensitive) == 0 ||
        wanted.compare(presets[k].name, Qt::CaseInsensitive) == 0)
      return static_cast<int>(k);
  return -1;
}

std::optional<FigureStyle> venue_preset(const std::string& name) {
  const int index = venue_preset_index(name);
  if (index < 0) return std::nullopt;
  return venue_presets()[static_cast<std::size_t>(index)].style;
}

// ---------------------------------------------------------------------------------------------
// [SECTION] Analysis figures

namespace {

// A registered analysis's figure on `plot`, in the style it returns.
FigureStyle plot_figure_kind(QCustomPlot& plot, const analysis::AnalysisFigure& figure,
                             const FigureStyle& s) {
  using Kind = analysis::AnalysisFigure::Kind;
  switch (figure.kind) {
    case Kind::Bars: {
      std::vector<Bar> bars;
      if (!figure.series.empty()) {
        const auto& series = figure.series.front();
        for (std::size_t k = 0; k < series.y.size(); ++k) {
          const auto index = k < series.x.size() ? static_cast<std::size_t>(series.x[k]) : k;
          const QString name = index < figure.categories.size()
                                   ? QString::fromStdString(figure.categories[index])
                                   : QString::number(k + 1);
          Bar bar{name, series.y[k], k < series.spread.size() ? series.spread[k] : 0.0};
          if (series.low.size() == series.y.size() && series.high.size() == series.y.size()) {
            bar.low = series.low[k];
            bar.high = series.high[k];
          }
          bars.push_back(bar);
        }
      }
      plot_bars(plot, bars, s.y_title, s);
      return s;
    }
    case Kind::Heatmap:
      return plot_heatmap(plot, figure.matrix, figure.labels, figure.diverging,
                          QString::fromStdString(figure.colour_label), s);
    case Kind::Grid:
      return plot_grid(plot, figure, s);
    case Kind::Scatter: {
      std::vector<ScatterGroup> groups;
      for (const auto& a : figure.series)
        groups.push_back({QString::fromStdString(a.name), a.x, a.y});
      // Axis titles only where the figure has them: an embedding's axes carry no units.
      return plot_scatter(plot, groups, s,
                          QString::fromStdString(figure.x_label).isEmpty() ? QString() : s.x_title,
                          QString::fromStdString(figure.y_label).isEmpty() ? QString() : s.y_title);
    }
    case Kind::Lines:
      break;
  }
  std::vector<Series> lines;
  for (const auto& a : figure.series) {
    Series line{QString::fromStdString(a.name), a.x, a.y, {}, {}, a.right_axis};
    if (a.low.size() == a.y.size() && a.high.size() == a.y.size()) {
      line.low = a.low;
      line.high = a.high;
    } else if (a.spread.size() == a.y.size())
      for (std::size_t k = 0; k < a.y.size(); ++k) {
        line.low.push_back(a.y[k] - a.spread[k]);
        line.high.push_back(a.y[k] + a.spread[k]);
      }
    lines.push_back(std::move(line));
  }
  std::vector<std::pair<QString, double>> references;
  for (const auto& [name, y] : figure.references)
    references.push_back({QString::fromStdString(name), y});
  plot_lines(plot, lines, s.x_title, s.y_title, s, QString::fromStdString(figure.right_label),
             references, figure.log_x);
  return s;
}

// A registered analysis's figure on `plot` with its note under it, in the style it returns.
FigureStyle plot_analysis_figure(QCustomPlot& plot, const analysis::AnalysisFigure& figure,
                                 const FigureStyle& s) {
  FigureStyle drawn = plot_figure_kind(plot, figure, s);
  const double note = add_note(plot, drawn, QString::fromStdString(figure.note));
  // A height left to the figure grows by the note's, so the data keep the room they had.
  if (note > 0.0 && s.height <= 0.0) drawn.height = height_inches(drawn) + note / 72.0;
  return drawn;
}

FigureStyle analysis_style(const analysis::AnalysisFigure& figure, const FigureStyle& style) {
  return with_defaults(
      style, {QString::fromStdString(figure.title), QString::fromStdString(figure.x_label),
              QString::fromStdString(figure.y_label)});
}

}  // namespace

QImage render_analysis_figure(const analysis::AnalysisFigure& figure, const FigureStyle& style) {
  QCustomPlot plot;
  const FigureStyle s = plot_analysis_figure(plot, figure, analysis_style(figure, style));
  return raster(plot, s);
}

std::string analysis_figure_csv(const analysis::AnalysisFigure& figure) {
  if (figure.kind == analysis::AnalysisFigure::Kind::Heatmap)
    return analysis::map_csv(figure.matrix, figure.labels);
  if (figure.kind == analysis::AnalysisFigure::Kind::Grid) {
    // One row of the grid per line, its label first (under the rows' axis title); blank cells
    // are empty fields.
    std::vector<std::string> header{figure.y_label.empty() ? "row" : figure.y_label};
    header.insert(header.end(), figure.labels.begin(), figure.labels.end());
    CsvWriter out(header, 9);
    const std::size_t cols = figure.labels.size();
    for (std::size_t i = 0; i < figure.row_labels.size(); ++i) {
      out << figure.row_labels[i];
      for (std::size_t j = 0; j < cols; ++j) out << figure.cells[i * cols + j];
      out.end_row();
    }
    return out.text();
  }
  // An interval that is not symmetric (a bootstrap's) adds its ends.
  const bool intervals = std::any_of(figure.series.begin(), figure.series.end(), [](const auto& a) {
    return !a.low.empty() && a.low.size() == a.y.size() && a.high.size() == a.y.size();
  });
  std::vector<std::string> header{"series", "x", "y", "spread"};
  if (intervals) header.insert(header.end(), {"low", "high"});
  CsvWriter out(header, 9);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (const auto& a : figure.series)
    for (std::size_t k = 0; k < a.y.size(); ++k) {
      const bool interval = a.low.size() == a.y.size() && a.high.size() == a.y.size();
      out << a.name << (k < a.x.size() ? a.x[k] : static_cast<double>(k)) << a.y[k]
          << (k < a.spread.size() ? a.spread[k]
              : interval          ? (a.high[k] - a.low[k]) / 2
                                  : 0.0);
      if (intervals) out << (interval ? a.low[k] : nan) << (interval ? a.high[k] : nan);
      out.end_row();
    }
  return out.text();
}

std::vector<std::string> save_analysis_figure(const std::string& base,
                                              const analysis::AnalysisFigure& figure,
                                              const FigureStyle& style, bool with_csv) {
  QCustomPlot plot;
  const FigureStyle s = plot_analysis_figure(plot, figure, analysis_style(figure, style));
  std::vector<std::string> written = save_all(plot, base, s);
  if (!with_csv) return written;
  const std::string csv = base + ".csv";
  write_text_atomically(csv, analysis_figure_csv(figure));  // throws naming the file
  written.push_back(csv);
  return written;
}

}  // namespace dstudio::viz
