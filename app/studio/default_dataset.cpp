#include "default_dataset.h"

#include "dstudio/behaviour/default_datasets.h"

namespace dstudio::studio {

QString ensureDefaultDataset(const Progress& progress) {
  const auto path = behaviour::ensure_default_dataset("hopper", behaviour::DatasetKind::Medium, progress, behaviour::PolicyAlgorithm::Ars);
  return QString::fromStdString(path.string());
}

}  // namespace dstudio::studio
