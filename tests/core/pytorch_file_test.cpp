// The torch.save reader (and the state_dict writer) against files whose contents are known
// (tests/reference/ pytorch_file_fixtures.py writes them; the values below follow from its
// arange-based tensors), and the files it must refuse with a clear message.

#include "dstudio/models/pytorch_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "csv_check.h"
#include "h5_fixture.h"

namespace dstudio::models {
namespace {

using testing::HasSubstr;
namespace fs = std::filesystem;

const fs::path kData = fs::path(DSTUDIO_TEST_DATA);

std::string error_of(const fs::path& path) {
  try {
    read_pytorch_file(path);
  } catch (const PyTorchFileError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(PyTorchFile, ReadsStridedTensorsEveryDtypeNumpyAndNesting) {
  const auto f = read_pytorch_file(kData / "pytorch_file/known_values.pt");
  // arange(6).reshape(2, 3).t(): element (i, j) = 3 j + i, stored with strides (1, 3).
  const auto& t = f.tensors.at("transposed");
  EXPECT_EQ(t.dtype, "float32");
  EXPECT_EQ(t.shape, (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(t.values, (std::vector<float>{0, 3, 1, 4, 2, 5}));
  // arange(10)[2:8:2] in float64: storage offset 2, stride 2.
  EXPECT_EQ(f.tensors.at("sliced").values, (std::vector<float>{2, 4, 6}));
  EXPECT_EQ(f.tensors.at("sliced").dtype, "float64");
  EXPECT_EQ(f.tensors.at("half").values, (std::vector<float>{1.5f, -0.25f, 65504.0f}));
  EXPECT_EQ(f.tensors.at("bfloat").values, (std::vector<float>{1.5f, -2.0f}));
  EXPECT_EQ(f.tensors.at("long").values, (std::vector<float>{-3, 7}));
  EXPECT_EQ(f.tensors.at("long").shape, (std::vector<int64_t>{1, 2}));
  // ~tril(ones(3, 3)): true strictly above the diagonal.
  EXPECT_EQ(f.tensors.at("mask").dtype, "bool");
  EXPECT_EQ(f.tensors.at("mask").values, (std::vector<float>{0, 1, 1, 0, 0, 1, 0, 0, 0}));
  EXPECT_EQ(f.tensors.at("nested.inner.w").values, (std::vector<float>{0.5f, 0.5f}));
  EXPECT_EQ(f.tensors.at("nested.items.0").values, (std::vector<float>{1.0f}));
  EXPECT_EQ(f.numbers.at("nested.items.1"), 3.0);
  // numpy: big-endian float64 and a Fortran-ordered (2, 3) array, read back in row-major order.
  EXPECT_EQ(f.tensors.at("big_endian").values, (std::vector<float>{0, 1, 2, 3}));
  EXPECT_EQ(f.tensors.at("fortran").shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(f.tensors.at("fortran").values, (std::vector<float>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(f.numbers.at("count"), 42.0);
  EXPECT_EQ(f.numbers.at("rate"), 0.125);
  EXPECT_EQ(f.order.front(), "transposed");  // the file's order, not alphabetical
}

TEST(PyTorchFile, ReadsAStateDictAndACorlCheckpointDict) {
  const auto a = read_pytorch_file(kData / "corl_dt/a_state_dict.pt");
  EXPECT_EQ(a.tensors.at("state_emb.weight").shape, (std::vector<int64_t>{16, 11}));
  EXPECT_EQ(a.tensors.at("blocks.1.attention.in_proj_weight").shape,
            (std::vector<int64_t>{48, 16}));
  EXPECT_EQ(a.tensors.at("timestep_emb.weight").shape, (std::vector<int64_t>{45, 16}));
  EXPECT_EQ(a.tensors.at("blocks.0.causal_mask").shape, (std::vector<int64_t>{15, 15}));
  const auto b = read_pytorch_file(kData / "corl_dt/b_checkpoint.pt");
  EXPECT_EQ(b.tensors.at("model_state.action_head.0.weight").shape, (std::vector<int64_t>{3, 24}));
  EXPECT_EQ(b.tensors.at("state_mean").shape, (std::vector<int64_t>{1, 11}));
  EXPECT_EQ(b.tensors.at("state_std").dtype, "float32");
  for (float s : b.tensors.at("state_std").values) EXPECT_TRUE(s >= 0.5f && s <= 2.0f);
}

TEST(PyTorchFile, RefusesOtherFilesWithAClearMessage) {
  EXPECT_THAT(error_of(kData / "pytorch_file/legacy.pt"), HasSubstr("legacy format"));
  EXPECT_THAT(error_of(kData / "pytorch_file/torchscript.pt"), HasSubstr("TorchScript"));
  EXPECT_THAT(error_of(kData / "corl_dt/a_inputs.h5"),
              HasSubstr("not a file written by torch.save"));
  EXPECT_THAT(error_of(kData / "missing.pt"), HasSubstr("no such file"));

  test::TempDir dir;
  std::ifstream in(kData / "corl_dt/a_state_dict.pt", std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // Cut anywhere: the reader reports it, never crashes (also run under AddressSanitizer).
  for (std::size_t cut = 1; cut < bytes.size(); cut += 97) {
    std::ofstream(dir / "cut.pt", std::ios::binary) << bytes.substr(0, cut);
    EXPECT_THAT(error_of(dir / "cut.pt"), HasSubstr("cut.pt: ")) << "cut at " << cut;
  }
  // A flipped byte inside a tensor's data is caught by the entry's checksum.
  std::string flipped = bytes;
  flipped[bytes.size() / 2] = static_cast<char>(flipped[bytes.size() / 2] ^ 0x40);
  std::ofstream(dir / "flipped.pt", std::ios::binary) << flipped;
  EXPECT_THAT(
      error_of(dir / "flipped.pt"),
      HasSubstr("entry a_state_dict/data/29 is damaged (its CRC-32 does not match its bytes)"));
  // Damage anywhere (zip records, the pickle, tensor data): a flipped byte reads or fails with
  // PyTorchFileError, never anything else.
  for (std::size_t at = 0; at < bytes.size(); at += 61) {
    std::string damaged = bytes;
    damaged[at] = static_cast<char>(damaged[at] ^ 0xFF);
    std::ofstream(dir / "damaged.pt", std::ios::binary) << damaged;
    try {
      read_pytorch_file(dir / "damaged.pt");
    } catch (const PyTorchFileError&) {
    }
  }
}

// A state_dict written as torch.save writes one reads back exactly, and Python's standard zipfile
// and pickle modules (not the project's reader) see the archive torch.load expects: CRCs that
// check, every entry's bytes on a 64-byte boundary, an OrderedDict of _rebuild_tensor_v2 calls
// on storages, and no global beyond the ones torch.load(weights_only=True) allows.
TEST(PyTorchFile, AWrittenStateDictReadsBackExactlyAndAsPythonSeesIt) {
  test::TempDir dir;
  const std::vector<NamedTensor> tensors = {
      {"layer.weight", {"float32", {2, 3}, {0.5f, -1.25f, 3.0f, 1e-7f, -0.0f, 65504.0f}}},
      {"layer.bias", {"float32", {2}, {7.0f, -7.0f}}},
      {"blocks.0.causal_mask", {"bool", {2, 2}, {0.0f, 1.0f, 0.0f, 0.0f}}},
      {"scale", {"float32", {}, {2.5f}}}};
  write_pytorch_state_dict(dir / "model.pt", tensors);
  const auto back = read_pytorch_file(dir / "model.pt");
  ASSERT_EQ(back.order.size(), tensors.size());
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const auto& [name, t] = tensors[i];
    EXPECT_EQ(back.order[i], name);
    EXPECT_EQ(back.tensors.at(name).dtype, t.dtype) << name;
    EXPECT_EQ(back.tensors.at(name).shape, t.shape) << name;
    EXPECT_EQ(back.tensors.at(name).values, t.values) << name;
  }
  static const char* script = R"PY(
import pickle, struct, sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
assert z.testzip() is None, 'a CRC does not check'
names = z.namelist()
assert all(n.startswith('model/') for n in names), names
for info in z.infolist():
    z.fp.seek(info.header_offset + 26)
    n, m = struct.unpack('<HH', z.fp.read(4))
    assert (info.header_offset + 30 + n + m) % 64 == 0, info.filename
assert z.read('model/version') == b'3\n'
class Storage:
    def __init__(self, dtype): self.dtype = dtype
allowed = {('collections', 'OrderedDict'), ('torch._utils', '_rebuild_tensor_v2'),
           ('torch', 'FloatStorage'), ('torch', 'BoolStorage')}
def rebuild(storage, offset, shape, stride, requires_grad, hooks):
    kind, cls, key, location, numel = storage
    raw = z.read('model/data/' + key)
    values = (list(struct.unpack('<%df' % numel, raw)) if cls.dtype == 'float32'
              else [float(b) for b in raw])
    return (cls.dtype, tuple(shape), tuple(stride), requires_grad, location, values)
class Reader(pickle.Unpickler):
    def find_class(self, module, name):
        assert (module, name) in allowed, (module, name)
        if name == 'OrderedDict':
            import collections; return collections.OrderedDict
        if name == '_rebuild_tensor_v2': return rebuild
        return Storage('float32' if name == 'FloatStorage' else 'bool')
    def persistent_load(self, pid): return pid
import io
state = Reader(io.BytesIO(z.read('model/data.pkl'))).load()
print(type(state).__name__)
for name, (dtype, shape, stride, grad, location, values) in state.items():
    print(name, dtype, list(shape), list(stride), grad, location, ' '.join(repr(v) for v in values))
)PY";
  const auto out = test::python_output(script, dir / "model.pt");
  EXPECT_EQ(out,
            "OrderedDict\n"
            "layer.weight float32 [2, 3] [3, 1] False cpu 0.5 -1.25 3.0 1.0000000116860974e-07 "
            "-0.0 65504.0\n"
            "layer.bias float32 [2] [1] False cpu 7.0 -7.0\n"
            "blocks.0.causal_mask bool [2, 2] [2, 1] False cpu 0.0 1.0 0.0 0.0\n"
            "scale float32 [] [] False cpu 2.5\n");
  EXPECT_THROW(write_pytorch_state_dict(dir / "bad.pt", {{"x", {"int64", {1}, {1.0f}}}}),
               PyTorchFileError);
  EXPECT_THROW(write_pytorch_state_dict(dir / "bad.pt", {{"x", {"float32", {3}, {1.0f}}}}),
               PyTorchFileError);
  EXPECT_FALSE(fs::exists(dir / "bad.pt"));
}

}  // namespace
}  // namespace dstudio::models
