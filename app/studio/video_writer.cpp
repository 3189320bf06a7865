// A recording's frames as MP4 or PNGs. See video_writer.h.

#include "video_writer.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QStandardPaths>
#include <QTextStream>
#include <QThreadPool>
#include <algorithm>

namespace dstudio::studio {
namespace {

QString part_of(const QString& video) { return video + QStringLiteral(".part"); }

}  // namespace

bool VideoWriter::ffmpegAvailable() {
  static const bool available = [] {
    const QString exe = QStandardPaths::findExecutable(QStringLiteral("ffmpeg"));
    if (exe.isEmpty()) return false;
    QProcess probe;
    probe.start(exe, {QStringLiteral("-hide_banner"), QStringLiteral("-encoders")});
    if (!probe.waitForFinished(15000)) return false;
    return probe.readAllStandardOutput().contains("libx264");
  }();
  return available;
}

VideoWriter::VideoWriter(QString base, int frames_per_second, bool frames_only)
    : base_(std::move(base)),
      fps_(std::max(1, frames_per_second)),
      video_(!frames_only && ffmpegAvailable()),
      png_failures_(std::make_shared<std::atomic<int>>(0)) {}

VideoWriter::~VideoWriter() {
  if (ffmpeg_ && !finished_) {
    ffmpeg_->kill();
    ffmpeg_->waitForFinished(5000);
    QFile::remove(part_of(path()));
  }
  if (png_writer_) png_writer_->waitForDone();
}

QString VideoWriter::path() const { return video_ ? base_ + QStringLiteral(".mp4") : base_; }

bool VideoWriter::start(QSize size) {
  size_ = QSize(size.width() & ~1, size.height() & ~1);
  if (size_.width() < 2 || size_.height() < 2) {
    error_ = QObject::tr("the frame is empty");
    return false;
  }
  if (!QDir().mkpath(video_ ? QFileInfo(base_).absolutePath() : base_)) {
    error_ = QObject::tr("cannot make the folder of %1").arg(path());
    return false;
  }
  if (!video_) {
    png_writer_ = std::make_unique<QThreadPool>();
    png_writer_->setMaxThreadCount(1);
    return true;
  }
  // Raw RGB frames on ffmpeg's standard input, H.264 out; the file takes its name when done.
  ffmpeg_ = std::make_unique<QProcess>();
  ffmpeg_->start(QStandardPaths::findExecutable(QStringLiteral("ffmpeg")),
                 {QStringLiteral("-hide_banner"), QStringLiteral("-loglevel"), QStringLiteral("error"), QStringLiteral("-y"),
                  QStringLiteral("-f"), QStringLiteral("rawvideo"), QStringLiteral("-pixel_format"), QStringLiteral("rgb24"),
                  QStringLiteral("-video_size"), QStringLiteral("%1x%2").arg(size_.width()).arg(size_.height()),
                  QStringLiteral("-framerate"), QString::number(fps_), QStringLiteral("-i"), QStringLiteral("pipe:0"),
                  QStringLiteral("-c:v"), QStringLiteral("libx264"), QStringLiteral("-preset"), QStringLiteral("veryfast"),
                  QStringLiteral("-crf"), QStringLiteral("18"), QStringLiteral("-pix_fmt"), QStringLiteral("yuv420p"),
                  QStringLiteral("-movflags"), QStringLiteral("+faststart"), QStringLiteral("-f"), QStringLiteral("mp4"), part_of(path())});
  if (!ffmpeg_->waitForStarted(15000)) {
    error_ = QObject::tr("ffmpeg did not start: %1").arg(ffmpeg_->errorString());
    return false;
  }
  return true;
}

QImage VideoWriter::fitted(const QImage& frame) const {
  QImage f = frame.convertToFormat(QImage::Format_RGB888);
  if (f.size() == size_) return f;
  // An odd dimension loses its last row or column; a frame of another size (the window was
  // resized) is scaled to the recording's.
  if (f.width() - size_.width() <= 1 && f.height() - size_.height() <= 1 && f.width() >= size_.width() && f.height() >= size_.height())
    return f.copy(0, 0, size_.width(), size_.height());
  return f.scaled(size_, Qt::IgnoreAspectRatio, Qt::SmoothTransformation);
}

bool VideoWriter::add(const QImage& frame) {
  if (finished_) {
    error_ = QObject::tr("the recording is finished");
    return false;
  }
  if (frames_ == 0 && !start(frame.size())) return false;
  const QImage f = fitted(frame);
  if (video_) {
    if (ffmpeg_->state() != QProcess::Running) {
      error_ = QObject::tr("ffmpeg stopped: %1").arg(QString::fromLocal8Bit(ffmpeg_->readAllStandardError()).trimmed());
      return false;
    }
    const qint64 row = 3LL * f.width();
    for (int y = 0; y < f.height(); ++y) ffmpeg_->write(reinterpret_cast<const char*>(f.constScanLine(y)), row);
    // Frames come faster than ffmpeg encodes them: no more than a few wait in memory.
    while (ffmpeg_->bytesToWrite() > 4 * row * f.height() && ffmpeg_->state() == QProcess::Running) ffmpeg_->waitForBytesWritten(1000);
  } else {
    if (png_failures_->load() > 0) {
      error_ = QObject::tr("cannot write the frames into %1").arg(base_);
      return false;
    }
    const QString file = QDir(base_).filePath(QStringLiteral("frame-%1.png").arg(frames_, 6, 10, QLatin1Char('0')));
    png_writer_->start([f, file, failures = png_failures_] {
      if (!f.save(file, "PNG")) ++*failures;
    });
  }
  ++frames_;
  return true;
}

bool VideoWriter::finish() {
  if (finished_) return error_.isEmpty();
  finished_ = true;
  if (frames_ == 0) {
    error_ = QObject::tr("no frame was recorded");
    return false;
  }
  if (!video_) {
    png_writer_->waitForDone();
    if (png_failures_->load() > 0) {
      error_ = QObject::tr("%1 frames could not be written into %2").arg(png_failures_->load()).arg(base_);
      return false;
    }
    QFile notes(QDir(base_).filePath(QStringLiteral("recording.txt")));
    if (notes.open(QIODevice::WriteOnly | QIODevice::Text)) {
      QTextStream out(&notes);
      out << "frames " << frames_ << "\nframes_per_second " << fps_ << "\nwidth " << size_.width() << "\nheight " << size_.height() << "\n"
          << "# ffmpeg was not found; the video these frames make:\n"
          << "ffmpeg -framerate " << fps_ << " -i frame-%06d.png -c:v libx264 -pix_fmt yuv420p viewer.mp4\n";
    }
    return true;
  }
  ffmpeg_->closeWriteChannel();
  const bool done = ffmpeg_->waitForFinished(300000);
  const QString part = part_of(path());
  if (!done || ffmpeg_->exitStatus() != QProcess::NormalExit || ffmpeg_->exitCode() != 0) {
    if (!done) ffmpeg_->kill(), ffmpeg_->waitForFinished(5000);
    error_ = QObject::tr("ffmpeg failed: %1").arg(QString::fromLocal8Bit(ffmpeg_->readAllStandardError()).trimmed());
    QFile::remove(part);
    return false;
  }
  QFile::remove(path());
  if (!QFile::rename(part, path())) {
    error_ = QObject::tr("cannot name the video %1").arg(path());
    return false;
  }
  return true;
}

}  // namespace dstudio::studio
