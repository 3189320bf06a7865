// Fuzz target: the torch.save reader (models::read_pytorch_file), zip entries and pickle machine,
// on any bytes. An accepted file's tensors must hold exactly their shapes' numbers of values.

#include <cstddef>
#include <cstdint>

#include "dstudio/models/pytorch_file.h"
#include "fuzz_support.h"

extern "C" const char* __asan_default_options() {
  return "detect_leaks=1";
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace dstudio;
  const auto path = fuzz::input_file(data, size, "input.pt");
  fuzz::run([&] {
    const models::PyTorchFile file = models::read_pytorch_file(path);
    fuzz::require(file.order.size() == file.tensors.size(), "every tensor is listed once in order");
    for (const auto& name : file.order) {
      const auto it = file.tensors.find(name);
      fuzz::require(it != file.tensors.end(), "every name in order has its tensor");
      const auto& t = it->second;
      std::int64_t n = 1;
      for (auto d : t.shape) {
        fuzz::require(d >= 0, "dimensions are not negative");
        n *= d;
      }
      fuzz::require(t.numel() == n && static_cast<std::int64_t>(t.values.size()) == n,
                    "a tensor holds its shape's number of values");
    }
  });
  return 0;
}
