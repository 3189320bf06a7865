// render_icon SVG OUT_DIR SIZE...: the icon theme's PNG sizes, drawn from the one SVG at build
// time.

#include <QGuiApplication>
#include <QImage>
#include <QPainter>
#include <QSvgRenderer>
#include <cstdio>

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: render_icon SVG OUT_DIR SIZE...\n");
    return 2;
  }
  qputenv("QT_QPA_PLATFORM", "offscreen");
  QGuiApplication app(argc, argv);
  QSvgRenderer svg(QString::fromLocal8Bit(argv[1]));
  if (!svg.isValid()) {
    std::fprintf(stderr, "render_icon: %s is not a readable SVG\n", argv[1]);
    return 1;
  }
  for (int k = 3; k < argc; ++k) {
    const int size = QString::fromLocal8Bit(argv[k]).toInt();
    if (size < 8 || size > 1024) {
      std::fprintf(stderr, "render_icon: size %s is not in [8, 1024]\n", argv[k]);
      return 2;
    }
    QImage image(size, size, QImage::Format_ARGB32_Premultiplied);
    image.fill(Qt::transparent);
    QPainter painter(&image);
    painter.setRenderHint(QPainter::Antialiasing);
    svg.render(&painter);
    painter.end();
    const QString out =
        QStringLiteral("%1/decision-studio-%2.png").arg(QString::fromLocal8Bit(argv[2])).arg(size);
    if (!image.save(out)) {
      std::fprintf(stderr, "render_icon: cannot write %s\n", qPrintable(out));
      return 1;
    }
  }
  return 0;
}
