#pragma once
/// \file
/// Reading (and, for state_dicts, writing) the files that PyTorch's `torch.save` writes (the zip
/// format of PyTorch 1.6 and later), without LibTorch: a zip reader for the stored entries and a
/// pickle machine that knows the objects such files hold (dicts and OrderedDicts, tensors with
/// their storages, numpy arrays, numbers, strings, lists and tuples). Objects of other classes are
/// kept as opaque values, so a checkpoint that also pickles a configuration object still reads;
/// only its tensors and arrays are returned.

#include <cstdint>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "dstudio/common/error.h"

namespace dstudio::models {

/// A file that is not a readable torch.save archive; the message names the file and the problem.
class PyTorchFileError : public Error {
 public:
  using Error::Error;
};

/// A tensor or numpy array from the file, its values converted to float (bool and integer
/// tensors too: they are masks and small counts in the files this reads).
struct StoredTensor {
  std::string dtype;  ///< "float32", "float64", "float16", "bfloat16", "int64", "int32", "int16",
                      ///< "int8", "uint8", "bool"
  std::vector<int64_t> shape;  ///< row-major
  std::vector<float> values;   ///< shape's product of values, in row-major order

  [[nodiscard]] std::int64_t numel() const;
};

/// The tensors of a torch.save file, by dotted name: a state_dict's keys as they are
/// ("blocks.0.norm1.weight"), nested dicts joined with dots ("model_state.state_emb.weight"), list
/// and tuple items by index.
struct PyTorchFile {
  std::map<std::string, StoredTensor> tensors;
  std::vector<std::string> order;  ///< names in the order the file holds them
  std::map<std::string, double>
      numbers;  ///< plain ints and floats found beside the tensors, by dotted name
};

/// Reads `path`. Throws PyTorchFileError for a missing, truncated, compressed, legacy-format
/// (before PyTorch 1.6) or TorchScript file, or a pickle it cannot follow.
PyTorchFile read_pytorch_file(const std::filesystem::path& path);

/// A state_dict entry to write.
using NamedTensor = std::pair<std::string, StoredTensor>;

/// The bytes Python's `torch.save(state_dict)` writes for `tensors` (float32 or bool), in this
/// order: a zip archive (entries stored, 64-byte aligned, under the folder `archive`) holding an
/// OrderedDict pickle of `torch._utils._rebuild_tensor_v2` calls and one storage per tensor.
/// Only those globals are used, so `torch.load(..., weights_only=True)` reads it. Throws
/// PyTorchFileError for another dtype or values that do not fill their shape.
std::string pytorch_state_dict_bytes(const std::string& archive,
                                     const std::vector<NamedTensor>& tensors);
/// Writes pytorch_state_dict_bytes to `path` atomically, the archive named after its stem.
void write_pytorch_state_dict(const std::filesystem::path& path,
                              const std::vector<NamedTensor>& tensors);

}  // namespace dstudio::models
