// Writing a state_dict as Python's torch.save writes one. See pytorch_file.h.
//
// The pickle (protocol 2) holds what torch.save(model.state_dict()) holds: an OrderedDict whose
// values are torch._utils._rebuild_tensor_v2(storage, offset, size, stride, requires_grad,
// hooks), each storage a persistent id ('storage', torch.<X>Storage, key, 'cpu', numel) whose
// bytes are the zip entry <archive>/data/<key>. Only those globals appear, so torch.load reads it
// with weights_only=True. The zip stores (does not compress) its entries, each aligned to 64
// bytes as PyTorch's own writer aligns them.

#include <cstdint>
#include <cstring>
#include <string>

#include "../common/zip_archive.h"
#include "dstudio/common/atomic_file.h"
#include "dstudio/models/pytorch_file.h"

namespace dstudio::models {
namespace {

std::uint32_t crc32(std::string_view bytes) {
  return zip::crc32(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size());
}

void put16(std::string& out, std::uint32_t v) {
  out.push_back(static_cast<char>(v & 0xFF));
  out.push_back(static_cast<char>((v >> 8) & 0xFF));
}
void put32(std::string& out, std::uint32_t v) {
  put16(out, v & 0xFFFF);
  put16(out, v >> 16);
}

class Pickle {
 public:
  Pickle() { out_ += "\x80\x02"; }  // PROTO 2
  void global(const std::string& module, const std::string& name) {
    out_ += 'c' + module + '\n' + name + '\n';
  }
  void text(const std::string& s) {
    out_ += 'X';  // BINUNICODE
    put32(out_, static_cast<std::uint32_t>(s.size()));
    out_ += s;
  }
  void integer(std::int64_t v) {
    if (v >= 0 && v < 256) {
      out_ += 'K';  // BININT1
      out_.push_back(static_cast<char>(v));
    } else if (v >= INT32_MIN && v <= INT32_MAX) {
      out_ += 'J';  // BININT
      put32(out_, static_cast<std::uint32_t>(static_cast<std::int32_t>(v)));
    } else {
      // LONG1: little-endian two's complement in 8 bytes.
      out_ += "\x8a\x08";
      for (int i = 0; i < 8; ++i)
        out_.push_back(static_cast<char>((static_cast<std::uint64_t>(v) >> (8 * i)) & 0xFF));
    }
  }
  void ints(const std::vector<std::int64_t>& values) {
    mark();
    for (const auto v : values) integer(v);
    op('t');  // TUPLE
  }
  void mark() { op('('); }
  void op(char c) { out_ += c; }
  [[nodiscard]] std::string done() {
    op('.');  // STOP
    return std::move(out_);
  }

 private:
  std::string out_;
};

const char* storage_class(const std::string& dtype) {
  if (dtype == "float32") return "FloatStorage";
  if (dtype == "bool") return "BoolStorage";
  throw PyTorchFileError("cannot write a tensor of dtype '" + dtype +
                         "' (float32 and bool are written)");
}

std::string storage_bytes(const StoredTensor& t) {
  std::string bytes;
  if (t.dtype == "bool") {
    bytes.reserve(t.values.size());
    for (const float v : t.values) bytes.push_back(v != 0.0f ? 1 : 0);
  } else {
    bytes.resize(t.values.size() * sizeof(float));
    std::memcpy(bytes.data(), t.values.data(), bytes.size());  // little-endian, as x86 keeps it
  }
  return bytes;
}

}  // namespace

std::string pytorch_state_dict_bytes(const std::string& archive,
                                     const std::vector<NamedTensor>& tensors) {
  Pickle p;
  p.global("collections", "OrderedDict");
  p.op(')');                                                 // EMPTY_TUPLE
  p.op('R');                                                 // REDUCE
  std::vector<std::pair<std::string, std::string>> entries;  // zip name, bytes
  if (!tensors.empty()) p.mark();
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const auto& [name, t] = tensors[i];
    if (t.numel() != static_cast<std::int64_t>(t.values.size()))
      throw PyTorchFileError(name + ": " + std::to_string(t.values.size()) +
                             " values for a shape of " + std::to_string(t.numel()));
    const std::string key = std::to_string(i);
    p.text(name);
    p.global("torch._utils", "_rebuild_tensor_v2");
    p.mark();
    {
      p.mark();
      p.text("storage");
      p.global("torch", storage_class(t.dtype));
      p.text(key);
      p.text("cpu");
      p.integer(t.numel());
      p.op('t');  // TUPLE
      p.op('Q');  // BINPERSID
    }
    p.integer(0);  // storage offset
    p.ints(t.shape);
    std::vector<std::int64_t> stride(t.shape.size(), 1);
    for (std::size_t d = t.shape.size(); d-- > 1;) stride[d - 1] = stride[d] * t.shape[d];
    p.ints(stride);
    p.op('\x89');  // NEWFALSE: requires_grad
    p.global("collections", "OrderedDict");
    p.op(')');
    p.op('R');  // backward hooks: an empty OrderedDict
    p.op('t');
    p.op('R');
    entries.emplace_back(archive + "/data/" + key, storage_bytes(t));
  }
  if (!tensors.empty()) p.op('u');  // SETITEMS
  entries.insert(entries.begin(), {archive + "/data.pkl", p.done()});
  entries.emplace_back(archive + "/byteorder", "little");
  entries.emplace_back(archive + "/version", "3\n");

  std::string zip, directory;
  for (const auto& [name, bytes] : entries) {
    const auto offset = static_cast<std::uint32_t>(zip.size());
    const std::uint32_t crc = crc32(bytes);
    // Pad with an extra field so that the entry's bytes start on a 64-byte boundary.
    const std::size_t header = 30 + name.size();
    std::size_t pad = (64 - (zip.size() + header + 4) % 64) % 64;
    std::string extra;
    put16(extra, 0x4246);  // "FB", as PyTorch's writer names its padding
    put16(extra, static_cast<std::uint32_t>(pad));
    extra.append(pad, 'Z');
    put32(zip, 0x04034b50);
    put16(zip, 20);    // version needed: 2.0
    put16(zip, 0);     // flags
    put16(zip, 0);     // stored
    put16(zip, 0);     // time
    put16(zip, 0x21);  // date: 1980-01-01
    put32(zip, crc);
    put32(zip, static_cast<std::uint32_t>(bytes.size()));
    put32(zip, static_cast<std::uint32_t>(bytes.size()));
    put16(zip, static_cast<std::uint32_t>(name.size()));
    put16(zip, static_cast<std::uint32_t>(extra.size()));
    zip += name;
    zip += extra;
    zip += bytes;
    put32(directory, 0x02014b50);
    put16(directory, 20);  // made by
    put16(directory, 20);  // needed
    put16(directory, 0);
    put16(directory, 0);
    put16(directory, 0);
    put16(directory, 0x21);
    put32(directory, crc);
    put32(directory, static_cast<std::uint32_t>(bytes.size()));
    put32(directory, static_cast<std::uint32_t>(bytes.size()));
    put16(directory, static_cast<std::uint32_t>(name.size()));
    put16(directory, 0);  // extra
    put16(directory, 0);  // comment
    put16(directory, 0);  // disk
    put16(directory, 0);  // internal attributes
    put32(directory, 0);  // external attributes
    put32(directory, offset);
    directory += name;
  }
  if (zip.size() + directory.size() > 0xFFFFFFF0u)
    throw PyTorchFileError("a state_dict of over 4 GiB is not written (no zip64)");
  const auto directory_at = static_cast<std::uint32_t>(zip.size());
  zip += directory;
  put32(zip, 0x06054b50);
  put16(zip, 0);
  put16(zip, 0);
  put16(zip, static_cast<std::uint32_t>(entries.size()));
  put16(zip, static_cast<std::uint32_t>(entries.size()));
  put32(zip, static_cast<std::uint32_t>(directory.size()));
  put32(zip, directory_at);
  put16(zip, 0);
  return zip;
}

void write_pytorch_state_dict(const std::filesystem::path& path,
                              const std::vector<NamedTensor>& tensors) {
  const std::string archive = path.stem().string().empty() ? "archive" : path.stem().string();
  write_bytes_atomically(path, pytorch_state_dict_bytes(archive, tensors));
}

}  // namespace dstudio::models
