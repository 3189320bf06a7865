// Figures for papers. See figures.h.

#include "dstudio/viz/figures.h"

#include <QApplication>
#include <QSvgGenerator>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <qcustomplot.h>

#include "colors.h"
#include "gradients.h"

namespace dstudio::viz {
namespace {

// Okabe-Ito, in an order that stays distinct in grey scale too.
const std::vector<QColor>& categorical() {
  static const std::vector<QColor> c = {colors::kBlue, colors::kVermillion, colors::kBluishGreen, QColor(230, 159, 0),
                                        QColor(204, 121, 167), colors::kSkyBlue, QColor(240, 228, 66), QColor(0, 0, 0)};
  return c;
}

// Sizes in points; the plot's pixels are points, so a font of N pixels prints at N points.
struct Canvas {
  int width, height;
};

Canvas canvas(const FigureStyle& s) {
  const double h = s.height > 0 ? s.height : s.width / 1.618;
  return {static_cast<int>(std::lround(s.width * 72.0)), static_cast<int>(std::lround(h * 72.0))};
}

QFont font_of(const FigureStyle& s, double scale = 1.0) {
  QFont f("DejaVu Sans");
  f.setPixelSize(std::max(1, static_cast<int>(std::lround(s.font * scale))));
  return f;
}

void style_plot(QCustomPlot& plot, const FigureStyle& s) {
  const auto f = font_of(s), small = font_of(s, 0.85);
  for (auto* axis : {plot.xAxis, plot.yAxis}) {
    axis->setLabelFont(f);
    axis->setTickLabelFont(small);
    axis->setBasePen(QPen(Qt::black, 0.6));
    axis->setTickPen(QPen(Qt::black, 0.6));
    axis->setSubTickPen(QPen(Qt::black, 0.4));
    axis->grid()->setPen(QPen(QColor(225, 225, 225), 0.4));
  }
  plot.legend->setFont(small);
  plot.legend->setBorderPen(QPen(QColor(180, 180, 180), 0.4));
  plot.legend->setIconSize(14, 6);
  plot.legend->setRowSpacing(-2);
  plot.legend->setMargins(QMargins(3, 2, 3, 2));
  plot.legend->setBrush(QColor(255, 255, 255, 210));
  if (!s.title.isEmpty()) {
    plot.plotLayout()->insertRow(0);
    auto* title = new QCPTextElement(&plot, s.title, font_of(s, 0.95));
    plot.plotLayout()->addElement(0, 0, title);
  }
}

// The legend in a row under the plot, where it hides no data.
void legend_below(QCustomPlot& plot) {
  auto* sub = new QCPLayoutGrid;
  plot.plotLayout()->addElement(plot.plotLayout()->rowCount(), 0, sub);
  plot.plotLayout()->setRowStretchFactor(plot.plotLayout()->rowCount() - 1, 0.001);
  sub->addElement(0, 0, plot.legend);
  // Three entries a row, two when the names are long; the items already in the legend are laid
  // out again.
  int longest = 0;
  for (int i = 0; i < plot.legend->itemCount(); ++i)
    if (auto* item = qobject_cast<QCPPlottableLegendItem*>(plot.legend->item(i)))
      longest = std::max(longest, static_cast<int>(item->plottable()->name().size()));
  plot.legend->setWrap(longest > 10 ? 2 : 3);
  plot.legend->setFillOrder(QCPLegend::foColumnsFirst, true);
  plot.legend->setVisible(true);
}

std::vector<std::string> save_all(QCustomPlot& plot, const std::string& base, const FigureStyle& s) {
  const auto c = canvas(s);
  plot.resize(c.width, c.height);
  plot.replot();
  const QString b = QString::fromStdString(base);
  std::vector<std::string> written;
  if (plot.savePdf(b + ".pdf", c.width, c.height, QCP::epNoCosmetic, "Decision Studio", s.title)) written.push_back(base + ".pdf");
  QSvgGenerator svg;
  svg.setFileName(b + ".svg");
  svg.setSize(QSize(c.width, c.height));
  svg.setViewBox(QRect(0, 0, c.width, c.height));
  svg.setTitle(s.title);
  QCPPainter painter;
  if (painter.begin(&svg)) {
    plot.toPainter(&painter, c.width, c.height);
    painter.end();
    written.push_back(base + ".svg");
  }
  if (plot.savePng(b + ".png", c.width, c.height, s.dpi / 72.0, -1, s.dpi)) written.push_back(base + ".png");
  return written;
}

}  // namespace

FigureContext::FigureContext() {
  if (QApplication::instance()) return;
  if (!std::getenv("XDG_RUNTIME_DIR")) {
    // Qt wants a private runtime folder and complains on stderr without one.
    const auto dir = std::filesystem::temp_directory_path() / ("dstudio-runtime-" + std::to_string(getuid()));
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    std::filesystem::permissions(dir, std::filesystem::perms::owner_all, ec);
    if (!ec) setenv("XDG_RUNTIME_DIR", dir.c_str(), 1);
  }
  if (!std::getenv("DISPLAY") && !std::getenv("WAYLAND_DISPLAY") && !std::getenv("QT_QPA_PLATFORM")) setenv("QT_QPA_PLATFORM", "offscreen", 1);
  static int argc = 1;
  static char name[] = "dstudio";
  static char* argv[] = {name, nullptr};
  app_ = std::make_unique<QApplication>(argc, argv);
}

FigureContext::~FigureContext() = default;

std::vector<std::string> save_heatmap(const std::string& base, const analysis::TokenMatrix& m, const std::vector<std::string>& labels,
                                      bool diverging_map, const QString& colour_label, const FigureStyle& style) {
  QCustomPlot plot;
  FigureStyle s = style;
  if (s.height <= 0) s.height = s.width * 0.85;  // maps are nearly square
  style_plot(plot, s);
  const int T = m.tokens;
  auto* map = new QCPColorMap(plot.xAxis, plot.yAxis);
  map->data()->setSize(T, T);
  map->data()->setRange(QCPRange(0, T - 1), QCPRange(0, T - 1));
  double lo = 0.0, hi = 0.0;
  for (int i = 0; i < T; ++i)
    for (int j = 0; j < T; ++j) {
      const bool blank = j > i || (i < static_cast<int>(labels.size()) && (labels[static_cast<std::size_t>(i)] == "pad" || labels[static_cast<std::size_t>(j)] == "pad"));
      const double v = blank ? std::nan("") : m.at(i, j);
      map->data()->setCell(j, i, v);
      if (!blank) lo = std::min(lo, v), hi = std::max(hi, v);
    }
  map->setInterpolate(false);
  // A few large weights (a first query has one key) would flatten everything else: the colour
  // range ends at the 99th percentile, and the scale says so.
  std::vector<double> seen;
  for (int i = 0; i < T; ++i)
    for (int j = 0; j < T; ++j)
      if (!std::isnan(map->data()->cell(j, i))) seen.push_back(std::abs(map->data()->cell(j, i)));
  QString label = colour_label;
  if (seen.size() > 20) {
    std::sort(seen.begin(), seen.end());
    const double p99 = seen[seen.size() * 99 / 100];
    if (p99 < std::max(std::abs(lo), std::abs(hi)) && p99 > 0) {
      hi = std::min(hi, p99);
      lo = std::max(lo, -p99);
      label += " (clipped at p99)";
    }
  }
  const double extent = std::max(std::abs(lo), std::abs(hi));
  auto* scale = new QCPColorScale(&plot);
  plot.plotLayout()->addElement(s.title.isEmpty() ? 0 : 1, 1, scale);
  scale->setType(QCPAxis::atRight);
  scale->setBarWidth(6);
  scale->axis()->setLabel(label);
  scale->axis()->setLabelFont(font_of(s, 0.9));
  scale->axis()->setTickLabelFont(font_of(s, 0.8));
  // The map takes its gradient and range from the scale it is attached to.
  map->setColorScale(scale);
  scale->setGradient(diverging_map ? diverging() : viridis());
  scale->setDataRange(diverging_map ? QCPRange(-std::max(extent, 1e-12), std::max(extent, 1e-12)) : QCPRange(lo, std::max(hi, lo + 1e-12)));
  auto* group = new QCPMarginGroup(&plot);
  plot.axisRect()->setMarginGroup(QCP::msBottom | QCP::msTop, group);
  scale->setMarginGroup(QCP::msBottom | QCP::msTop, group);
  // Token labels; with many tokens, every step's state token only.
  QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
  const int every = T > 24 ? 3 : 1;
  for (int k = 0; k < T && k < static_cast<int>(labels.size()); ++k) {
    const auto& l = labels[static_cast<std::size_t>(k)];
    if (every == 1 || (!l.empty() && (l[0] == 's' || l[0] == 't'))) ticker->addTick(k, QString::fromStdString(l));
  }
  plot.xAxis->setTicker(ticker);
  plot.yAxis->setTicker(ticker);
  plot.xAxis->setTickLabelRotation(90);
  plot.xAxis->setRange(-0.5, T - 0.5);
  plot.yAxis->setRange(-0.5, T - 0.5);
  plot.yAxis->setRangeReversed(true);
  plot.xAxis->setLabel("key");
  plot.yAxis->setLabel("query");
  plot.xAxis->grid()->setVisible(false);
  plot.yAxis->grid()->setVisible(false);
  plot.axisRect()->setBackground(QBrush(QColor(238, 238, 238)));
  return save_all(plot, base, s);
}

std::vector<std::string> save_lines(const std::string& base, const std::vector<Series>& series, const QString& x_label,
                                    const QString& y_label, const FigureStyle& style, const QString& right_label,
                                    const std::vector<std::pair<QString, double>>& references, bool log_x) {
  QCustomPlot plot;
  style_plot(plot, style);
  double xmin = 1e300, xmax = -1e300;
  for (std::size_t k = 0; k < series.size(); ++k) {
    const auto& sr = series[k];
    const QColor colour = categorical()[k % categorical().size()];
    QVector<double> x(sr.x.begin(), sr.x.end()), y(sr.y.begin(), sr.y.end());
    for (double v : sr.x) xmin = std::min(xmin, v), xmax = std::max(xmax, v);
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
    QPen pen(colour, 1.2);
    if (k % 2 == 1) pen.setStyle(Qt::DashLine);  // readable in black and white
    g->setPen(pen);
    if (sr.x.size() <= 30) g->setScatterStyle(QCPScatterStyle(k % 2 ? QCPScatterStyle::ssSquare : QCPScatterStyle::ssCircle, colour, 3));
    g->setName(sr.name);
  }
  for (const auto& [name, value] : references) {
    auto* line = new QCPItemStraightLine(&plot);
    line->point1->setCoords(0, value);
    line->point2->setCoords(1, value);
    line->setPen(QPen(colors::kGrey, 0.8, Qt::DotLine));
    auto* text = new QCPItemText(&plot);
    text->position->setType(QCPItemPosition::ptPlotCoords);
    text->position->setCoords(xmin, value);
    text->setPositionAlignment(Qt::AlignLeft | Qt::AlignTop);  // below the line: above it may leave the axes
    text->setText(name);
    text->setFont(font_of(style, 0.8));
    text->setColor(colors::kGrey);
  }
  if (log_x) {
    plot.xAxis->setScaleType(QCPAxis::stLogarithmic);
    // Ticks where the data are, written compactly (1.8k, 36k).
    QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
    if (!series.empty())
      for (double v : series.front().x) {
        const QString t = std::abs(v) >= 1000 ? QString::number(v / 1000.0, 'g', 3) + "k" : QString::number(v, 'g', 3);
        ticker->addTick(v, t);
      }
    plot.xAxis->setTicker(ticker);
  }
  plot.xAxis->setLabel(x_label);
  plot.yAxis->setLabel(y_label);
  if (!right_label.isEmpty()) {
    plot.yAxis2->setVisible(true);
    plot.yAxis2->setLabel(right_label);
    plot.yAxis2->setLabelFont(font_of(style));
    plot.yAxis2->setTickLabelFont(font_of(style, 0.85));
  }
  plot.rescaleAxes();
  if (!right_label.isEmpty()) plot.yAxis2->scaleRange(1.08, plot.yAxis2->range().center());
  for (const auto& [name, value] : references) {
    const auto r = plot.yAxis->range();
    plot.yAxis->setRange(std::min(r.lower, value), std::max(r.upper, value));
  }
  plot.yAxis->scaleRange(1.08, plot.yAxis->range().center());
  if (!log_x) plot.xAxis->scaleRange(1.04, plot.xAxis->range().center());
  if (series.size() > 1) legend_below(plot);
  return save_all(plot, base, style);
}

std::vector<std::string> save_bars(const std::string& base, const std::vector<Bar>& bars, const QString& y_label, const FigureStyle& style) {
  QCustomPlot plot;
  style_plot(plot, style);
  auto* b = new QCPBars(plot.xAxis, plot.yAxis);
  b->setWidth(0.6);
  b->setPen(QPen(colors::kBlue.darker(130), 0.6));
  b->setBrush(colors::kBlue);
  auto* err = new QCPErrorBars(plot.xAxis, plot.yAxis);
  err->setDataPlottable(b);
  err->setPen(QPen(Qt::black, 0.8));
  QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
  QVector<double> keys, values, errors;
  double top = 0.0, bottom = 0.0;
  for (std::size_t k = 0; k < bars.size(); ++k) {
    keys << static_cast<double>(k + 1);
    values << bars[k].mean;
    errors << bars[k].spread;
    ticker->addTick(static_cast<double>(k + 1), bars[k].name);
    top = std::max(top, bars[k].mean + bars[k].spread);
    bottom = std::min(bottom, bars[k].mean - bars[k].spread);
  }
  b->setData(keys, values);
  err->setData(errors);
  plot.xAxis->setTicker(ticker);
  plot.xAxis->grid()->setVisible(false);
  plot.xAxis->setRange(0.3, static_cast<double>(bars.size()) + 0.7);
  plot.yAxis->setRange(bottom * 1.1, top * 1.12 + 1e-9);
  plot.yAxis->setLabel(y_label);
  return save_all(plot, base, style);
}

std::vector<std::string> save_scatter(const std::string& base, const std::vector<ScatterGroup>& groups, const FigureStyle& style) {
  QCustomPlot plot;
  FigureStyle s = style;
  if (s.height <= 0) s.height = s.width;
  style_plot(plot, s);
  for (std::size_t k = 0; k < groups.size(); ++k) {
    auto* g = plot.addGraph();
    // Unsorted keys (the graph sorts them) and no adaptive sampling: every point is drawn.
    g->setData(QVector<double>(groups[k].x.begin(), groups[k].x.end()), QVector<double>(groups[k].y.begin(), groups[k].y.end()));
    g->setAdaptiveSampling(false);
    g->setLineStyle(QCPGraph::lsNone);
    QColor colour = categorical()[k % categorical().size()];
    colour.setAlpha(170);
    const QCPScatterStyle::ScatterShape shapes[] = {QCPScatterStyle::ssDisc, QCPScatterStyle::ssTriangle, QCPScatterStyle::ssSquare,
                                                     QCPScatterStyle::ssDiamond, QCPScatterStyle::ssCross};
    g->setScatterStyle(QCPScatterStyle(shapes[k % 5], colour, colour, 2.0));
    g->setName(groups[k].name);
  }
  plot.rescaleAxes();
  plot.xAxis->scaleRange(1.05, plot.xAxis->range().center());
  plot.yAxis->scaleRange(1.05, plot.yAxis->range().center());
  // t-SNE axes carry no units: no tick labels, no grid.
  for (auto* axis : {plot.xAxis, plot.yAxis}) {
    axis->setTicks(false);
    axis->grid()->setVisible(false);
    axis->grid()->setZeroLinePen(Qt::NoPen);
  }
  if (groups.size() > 1) legend_below(plot);
  return save_all(plot, base, s);
}

}  // namespace dstudio::viz
