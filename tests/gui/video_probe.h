#pragma once
// What ffprobe reads in a video file: its first video stream's size, frame rate and frames
// (counted by decoding them all).

#include <QProcess>
#include <QString>
#include <QStringList>

namespace dstudio::test {

struct VideoProbe {
  int width = 0, height = 0, frames = 0;
  QString rate;   ///< "30/1"
  QString codec;  ///< "h264"
  QString pixel_format;
};

inline VideoProbe probe_video(const QString& path) {
  QProcess p;
  p.start(QStringLiteral("ffprobe"),
          {"-v", "error", "-select_streams", "v:0", "-count_frames", "-show_entries",
           "stream=codec_name,width,height,r_frame_rate,nb_read_frames,pix_fmt", "-of",
           "default=noprint_wrappers=1", path});
  VideoProbe out;
  if (!p.waitForFinished(60000)) return out;
  for (const QString& line : QString::fromUtf8(p.readAllStandardOutput()).split('\n')) {
    const QString key = line.section('=', 0, 0), value = line.section('=', 1).trimmed();
    if (key == "width")
      out.width = value.toInt();
    else if (key == "height")
      out.height = value.toInt();
    else if (key == "nb_read_frames")
      out.frames = value.toInt();
    else if (key == "r_frame_rate")
      out.rate = value;
    else if (key == "codec_name")
      out.codec = value;
    else if (key == "pix_fmt")
      out.pixel_format = value;
  }
  return out;
}

}  // namespace dstudio::test
