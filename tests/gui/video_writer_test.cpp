// Recordings written at a fixed frame rate: an H.264 MP4 through ffmpeg with every frame given,
// at even dimensions, under its name only once finished; PNG frames and a note without ffmpeg.

#include "video_writer.h"

#include <gtest/gtest.h>

#include <QDir>
#include <QFile>
#include <QImage>
#include <QPainter>

#include "h5_fixture.h"
#include "video_probe.h"

namespace dstudio::studio {
namespace {

// A frame of an odd size whose colour tells it apart.
QImage frame(int i, QSize size = {101, 51}) {
  QImage image(size, QImage::Format_RGB32);
  image.fill(QColor::fromHsv((i * 37) % 360, 200, 220));
  QPainter(&image).fillRect(i % size.width(), 0, 3, size.height(), Qt::black);
  return image;
}

TEST(VideoWriter, WritesEveryFrameAsPngsWithTheirRateWhenAskedOrWithoutFfmpeg) {
  test::TempDir dir;
  const QString base = QString::fromStdString((dir / "clip").string());
  VideoWriter writer(base, 24, /*frames_only=*/true);
  EXPECT_FALSE(writer.isVideo());
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(writer.add(frame(i))) << writer.error().toStdString();
  ASSERT_TRUE(writer.finish()) << writer.error().toStdString();
  EXPECT_EQ(writer.path(), base);
  const QStringList pngs = QDir(base).entryList({"frame-*.png"}, QDir::Files, QDir::Name);
  ASSERT_EQ(pngs, (QStringList{"frame-000000.png", "frame-000001.png", "frame-000002.png"}));
  const QImage second(QDir(base).filePath(pngs[1]));
  EXPECT_EQ(second.size(), QSize(100, 50)) << "even dimensions";
  EXPECT_EQ(second.pixel(50, 25), frame(1).pixel(50, 25));
  QFile notes(QDir(base).filePath("recording.txt"));
  ASSERT_TRUE(notes.open(QIODevice::ReadOnly));
  const QByteArray text = notes.readAll();
  EXPECT_TRUE(text.contains("frames_per_second 24")) << text.toStdString();
  EXPECT_TRUE(text.contains("ffmpeg -framerate 24")) << text.toStdString();
}

TEST(VideoWriter, WritesAnMp4OfEveryFrameAtTheRateAndNamesItOnlyWhenFinished) {
  if (!VideoWriter::ffmpegAvailable()) GTEST_SKIP() << "ffmpeg with libx264 is not installed";
  test::TempDir dir;
  const QString base = QString::fromStdString((dir / "clip").string());
  {
    VideoWriter writer(base, 30);
    ASSERT_TRUE(writer.isVideo());
    for (int i = 0; i < 45; ++i)
      ASSERT_TRUE(writer.add(frame(i, i == 20 ? QSize(160, 90) : QSize(101, 51))))
          << writer.error().toStdString();
    EXPECT_EQ(writer.frameSize(), QSize(100, 50));
    EXPECT_FALSE(QFile::exists(base + ".mp4")) << "not before it is finished";
    ASSERT_TRUE(writer.finish()) << writer.error().toStdString();
  }
  const auto probe = test::probe_video(base + ".mp4");
  EXPECT_EQ(probe.codec, "h264");
  EXPECT_EQ(probe.pixel_format, "yuv420p");
  EXPECT_EQ(probe.width, 100);
  EXPECT_EQ(probe.height, 50);
  EXPECT_EQ(probe.rate, "30/1");
  EXPECT_EQ(probe.frames, 45);
  EXPECT_FALSE(QFile::exists(base + ".mp4.part"));

  // Abandoned before the end (the window closed): no file, not even a partial one.
  const QString other = QString::fromStdString((dir / "abandoned").string());
  {
    VideoWriter writer(other, 30);
    for (int i = 0; i < 5; ++i) ASSERT_TRUE(writer.add(frame(i)));
  }
  EXPECT_FALSE(QFile::exists(other + ".mp4"));
  EXPECT_FALSE(QFile::exists(other + ".mp4.part"));
  // Finishing with no frame says so and writes nothing.
  VideoWriter empty(QString::fromStdString((dir / "empty").string()), 30);
  EXPECT_FALSE(empty.finish());
  EXPECT_FALSE(empty.error().isEmpty());
  EXPECT_TRUE(QDir(QString::fromStdString(dir.path().string())).entryList({"empty*"}).isEmpty());
}

}  // namespace
}  // namespace dstudio::studio
