// The viewer panel's recordings through render::VideoFile. See video_writer.h.

#include "video_writer.h"

#include <cstring>

#include "dstudio/render/video_file.h"

namespace dstudio::studio {

bool VideoWriter::ffmpegAvailable() {
  return render::VideoFile::ffmpeg_available();
}

VideoWriter::VideoWriter(QString base, int frames_per_second, bool frames_only)
    : file_(std::make_unique<render::VideoFile>(base.toStdString(), frames_per_second,
                                                frames_only)) {}

VideoWriter::~VideoWriter() = default;

bool VideoWriter::add(const QImage& frame) {
  QImage f = frame.convertToFormat(QImage::Format_RGB888);
  // The first frame sets the size (made even); a later frame of another size was taken from a
  // resized window and is scaled to it, while one a row or column larger is cut like the first.
  const QSize size = frameSize();
  if (!size.isEmpty() && f.size() != size &&
      (f.width() < size.width() || f.height() < size.height() || f.width() - size.width() > 1 ||
       f.height() - size.height() > 1))
    f = f.scaled(size, Qt::IgnoreAspectRatio, Qt::SmoothTransformation);
  render::Image image{
      f.width(), f.height(),
      std::vector<std::uint8_t>(static_cast<std::size_t>(3) * f.width() * f.height())};
  for (int y = 0; y < f.height(); ++y)
    std::memcpy(&image.rgb[static_cast<std::size_t>(3) * f.width() * y], f.constScanLine(y),
                static_cast<std::size_t>(3) * f.width());
  if (!file_->add(image)) {
    error_ = QString::fromStdString(file_->error());
    return false;
  }
  return true;
}

bool VideoWriter::finish() {
  if (!file_->finish()) {
    error_ = QString::fromStdString(file_->error());
    return false;
  }
  return true;
}

bool VideoWriter::isVideo() const {
  return file_->is_video();
}
QString VideoWriter::path() const {
  return QString::fromStdString(file_->path().string());
}
int VideoWriter::frames() const {
  return file_->frames();
}
QSize VideoWriter::frameSize() const {
  return file_->frames() > 0 ? QSize(file_->width(), file_->height()) : QSize();
}
int VideoWriter::framesPerSecond() const {
  return file_->frames_per_second();
}

}  // namespace dstudio::studio
