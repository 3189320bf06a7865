#include "default_dataset.h"

#include <QDir>
#include <QFileInfo>
#include <QStandardPaths>

#include "dstudio/data/dataset_io.h"
#include "dstudio/data/synthetic.h"

namespace dstudio::studio {

QString defaultDatasetPath() {
  const QString cache = QStandardPaths::writableLocation(QStandardPaths::GenericCacheLocation);
  return QDir(cache).filePath("decision-studio/datasets/synthetic-hopper-v0.hdf5");
}

QString ensureDefaultDataset() {
  const QString path = defaultDatasetPath();
  if (QFileInfo::exists(path)) return path;
  QDir().mkpath(QFileInfo(path).absolutePath());
  data::SyntheticSpec spec;  // 20,000 hopper-shaped transitions, seed 0
  data::write_d4rl(path.toStdString(), data::make_synthetic(spec), data::synthetic_metadata(spec));
  return path;
}

}  // namespace dstudio::studio
