#pragma once
// The dataset the studio opens when started without arguments.

#include <QString>

namespace dstudio::studio {

/// Path of the embedded default dataset in the user's cache folder.
QString defaultDatasetPath();

/// Writes the default dataset if it is not in the cache yet (deterministic, a fraction of a
/// second) and returns its path. Throws data::DatasetError if it cannot be written.
QString ensureDefaultDataset();

}  // namespace dstudio::studio
