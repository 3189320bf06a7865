// torch.save archives: a zip of stored (uncompressed) entries, `<prefix>/data.pkl` holding the
// object graph as a pickle whose tensors point, through persistent ids, at `<prefix>/data/<key>`
// storages. See pytorch_file.h.

// Index of this file:
//   [SECTION] The zip archive
//   [SECTION] Pickled values
//   [SECTION] The unpickler
//   [SECTION] Reading the pickle's bytes
//   [SECTION] The unpickler's stack
//   [SECTION] Torch's storages and tensors
//   [SECTION] Reading a file

#include "dstudio/models/pytorch_file.h"

#include <array>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <utility>

#include "../common/zip_archive.h"
#include "dstudio/common/read_file.h"
#include "dstudio/models/checkpoint_integrity.h"

namespace dstudio::models {

std::int64_t StoredTensor::numel() const {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

namespace {

// ---------------------------------------------------------------------------------------------
// [SECTION] The zip archive

// The archive's bytes and directory; its errors are the reader's.
class Zip {
 public:
  Zip(std::string path, std::string bytes)
      : path_(std::move(path)), bytes_(std::move(bytes)), archive_(open(path_, bytes_)) {}

  [[nodiscard]] const std::map<std::string, zip::Record>& entries() const {
    return archive_.records();
  }

  /// An entry's bytes, checked against its CRC.
  [[nodiscard]] std::pair<const unsigned char*, std::size_t> read(const std::string& name) const {
    try {
      const auto data = archive_.read(name);
      return {reinterpret_cast<const unsigned char*>(data.data()), data.size()};
    } catch (const zip::ZipError& e) {
      throw PyTorchFileError(e.what());
    }
  }

  [[noreturn]] void fail(const std::string& why) const {
    throw PyTorchFileError(path_ + ": " + why);
  }

 private:
  static zip::Archive open(const std::string& path, std::string_view bytes) {
    try {
      return zip::Archive(path, bytes);
    } catch (const zip::ZipError& e) {
      throw PyTorchFileError(e.what());
    }
  }

  std::string path_;
  std::string bytes_;
  zip::Archive archive_;
};

// ---------------------------------------------------------------------------------------------
// [SECTION] Pickled values

struct Value;
using Ref = std::shared_ptr<Value>;

struct Value {
  enum class Kind {
    None,
    Bool,
    Int,
    Float,
    String,
    Bytes,
    List,
    Tuple,
    Dict,
    Global,
    Storage,
    Tensor,
    Dtype,
    Object,
    Mark
  };
  Kind kind = Kind::None;
  std::int64_t i = 0;
  double f = 0.0;
  std::string s;           // String, Bytes, Global ("module.name"), Storage dtype, Dtype code
  std::vector<Ref> items;  // List, Tuple
  std::vector<std::pair<Ref, Ref>> pairs;  // Dict, Object attributes
  std::string storage_key;                 // Storage
  bool is_array = false;                   // a numpy array (Tensor kind) still to be built
  char byte_order = '<';                   // Dtype
  StoredTensor tensor;
};

Ref make(Value::Kind kind) {
  auto v = std::make_shared<Value>();
  v->kind = kind;
  return v;
}

struct DtypeInfo {
  const char* name;
  int size;
};

// torch.<X>Storage class names and numpy dtype codes.
std::optional<DtypeInfo> storage_dtype(const std::string& cls) {
  static const std::map<std::string, DtypeInfo> known = {
      {"FloatStorage", {"float32", 4}}, {"DoubleStorage", {"float64", 8}},
      {"HalfStorage", {"float16", 2}},  {"BFloat16Storage", {"bfloat16", 2}},
      {"LongStorage", {"int64", 8}},    {"IntStorage", {"int32", 4}},
      {"ShortStorage", {"int16", 2}},   {"CharStorage", {"int8", 1}},
      {"ByteStorage", {"uint8", 1}},    {"BoolStorage", {"bool", 1}}};
  auto it = known.find(cls);
  if (it == known.end()) return std::nullopt;
  return it->second;
}

std::optional<DtypeInfo> numpy_dtype(const std::string& code) {
  static const std::map<std::string, DtypeInfo> known = {
      {"f4", {"float32", 4}}, {"f8", {"float64", 8}}, {"f2", {"float16", 2}},
      {"i8", {"int64", 8}},   {"i4", {"int32", 4}},   {"i2", {"int16", 2}},
      {"i1", {"int8", 1}},    {"u1", {"uint8", 1}},   {"b1", {"bool", 1}}};
  auto it = known.find(code);
  if (it == known.end()) return std::nullopt;
  return it->second;
}

float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000) << 16;
  std::uint32_t exp = (h >> 10) & 0x1F, mant = h & 0x3FF, bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: normalise
      exp = 127 - 15 + 1;
      while (!(mant & 0x400)) mant <<= 1, --exp;
      bits = sign | (exp << 23) | ((mant & 0x3FF) << 13);
    }
  } else if (exp == 31) {
    bits = sign | 0x7F800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// One element of `dtype` at p, little- or big-endian, as float.
float element(const unsigned char* p, const std::string& dtype, int size, bool big_endian) {
  std::array<unsigned char, 8> b{};
  for (int k = 0; k < size; ++k) b[static_cast<std::size_t>(k)] = p[big_endian ? size - 1 - k : k];
  auto as = [&](auto v) {
    std::memcpy(&v, b.data(), sizeof v);
    return static_cast<float>(v);
  };
  if (dtype == "float32") return as(float{});
  if (dtype == "float64") return as(double{});
  if (dtype == "int64") return as(std::int64_t{});
  if (dtype == "int32") return as(std::int32_t{});
  if (dtype == "int16") return as(std::int16_t{});
  if (dtype == "int8") return as(std::int8_t{});
  if (dtype == "uint8" || dtype == "bool") return as(std::uint8_t{});
  std::uint16_t h;
  std::memcpy(&h, b.data(), 2);
  if (dtype == "float16") return half_to_float(h);
  const std::uint32_t bits = static_cast<std::uint32_t>(h) << 16;  // bfloat16
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// ---------------------------------------------------------------------------------------------
// [SECTION] The unpickler

class Unpickler {
 public:
  Unpickler(const Zip& zip, std::string prefix, const unsigned char* data, std::size_t size)
      : zip_(zip), prefix_(std::move(prefix)), p_(data), end_(data + size) {}

  // Long on purpose: one loop over the pickle's opcodes, as pickle.py's _Unpickler.load, a case an
  // opcode. The cases share the stack, the marks and the memo; apart, each would take all three.
  Ref run() {
    while (true) {
      const unsigned char op = byte();
      switch (op) {
        case 0x80:
          byte();
          break;  // PROTO
        case 0x95:
          bytes(8);
          break;  // FRAME
        case '.':
          return pop();  // STOP
        case '(':
          push(make(Value::Kind::Mark));
          break;
        case 'N':
          push(make(Value::Kind::None));
          break;
        case 0x88:
          push_bool(true);
          break;  // NEWTRUE
        case 0x89:
          push_bool(false);
          break;  // NEWFALSE
        case 'J':
          push_int(static_cast<std::int32_t>(uint(4)));
          break;
        case 'K':
          push_int(static_cast<std::int64_t>(uint(1)));
          break;
        case 'M':
          push_int(static_cast<std::int64_t>(uint(2)));
          break;
        case 0x8a:
          push_int(long1(uint(1)));
          break;     // LONG1
        case 'G': {  // BINFLOAT, big-endian
          std::uint64_t bits = 0;
          for (int k = 0; k < 8; ++k) bits = (bits << 8) | byte();
          auto v = make(Value::Kind::Float);
          std::memcpy(&v->f, &bits, 8);
          push(v);
          break;
        }
        case 'X':
          push_text(Value::Kind::String, uint(4));
          break;  // BINUNICODE
        case 0x8c:
          push_text(Value::Kind::String, uint(1));
          break;  // SHORT_BINUNICODE
        case 0x8d:
          push_text(Value::Kind::String, uint(8));
          break;  // BINUNICODE8
        case 'T':
          push_text(Value::Kind::String, uint(4));
          break;  // BINSTRING
        case 'U':
          push_text(Value::Kind::String, uint(1));
          break;  // SHORT_BINSTRING
        case 'B':
          push_text(Value::Kind::Bytes, uint(4));
          break;  // BINBYTES
        case 'C':
          push_text(Value::Kind::Bytes, uint(1));
          break;  // SHORT_BINBYTES
        case 0x8e:
          push_text(Value::Kind::Bytes, uint(8));
          break;  // BINBYTES8
        case ']':
          push(make(Value::Kind::List));
          break;  // EMPTY_LIST
        case ')':
          push(make(Value::Kind::Tuple));
          break;  // EMPTY_TUPLE
        case '}':
          push(make(Value::Kind::Dict));
          break;  // EMPTY_DICT
        case 't':
          push(collect(Value::Kind::Tuple, marked()));
          break;  // TUPLE
        case 0x85:
          push(collect(Value::Kind::Tuple, 1));
          break;
        case 0x86:
          push(collect(Value::Kind::Tuple, 2));
          break;
        case 0x87:
          push(collect(Value::Kind::Tuple, 3));
          break;
        case 'l':
          push(collect(Value::Kind::List, marked()));
          break;     // LIST
        case 'a': {  // APPEND
          auto v = pop();
          top()->items.push_back(v);
          break;
        }
        case 'e': {  // APPENDS
          auto items = collect(Value::Kind::List, marked());
          auto& list = top()->items;
          list.insert(list.end(), items->items.begin(), items->items.end());
          break;
        }
        case 's': {  // SETITEM
          auto v = pop(), k = pop();
          top()->pairs.emplace_back(k, v);
          break;
        }
        case 'u': {  // SETITEMS
          auto items = collect(Value::Kind::List, marked());
          if (items->items.size() % 2) fail("SETITEMS with an odd number of values");
          for (std::size_t k = 0; k < items->items.size(); k += 2)
            top()->pairs.emplace_back(items->items[k], items->items[k + 1]);
          break;
        }
        case 'q':
          memo_[uint(1)] = top();
          break;  // BINPUT
        case 'r':
          memo_[uint(4)] = top();
          break;  // LONG_BINPUT
        case 0x94:
          memo_[memo_.size()] = top();
          break;  // MEMOIZE
        case 'h':
          push(memo(uint(1)));
          break;  // BINGET
        case 'j':
          push(memo(uint(4)));
          break;  // LONG_BINGET
        case '0':
          pop();
          break;     // POP
        case '1': {  // POP_MARK
          const auto n = marked();
          stack_.resize(stack_.size() - n);
          break;
        }
        case '2':
          push(top());
          break;     // DUP
        case 'c': {  // GLOBAL
          std::string module = line(), name = line();
          push_global(module + "." + name);
          break;
        }
        case 0x93: {  // STACK_GLOBAL
          auto name = pop(), module = pop();
          push_global(module->s + "." + name->s);
          break;
        }
        case 'Q':
          push(persistent(pop()));
          break;     // BINPERSID
        case 'R': {  // REDUCE
          auto args = pop(), callable = pop();
          push(reduce(callable, args));
          break;
        }
        case 0x81: {  // NEWOBJ
          auto args = pop(), cls = pop();
          auto v = make(Value::Kind::Object);
          v->s = cls->s;
          push(v);
          break;
        }
        case 'b': {  // BUILD
          auto state = pop();
          build(top(), state);
          break;
        }
        default:
          fail("uses pickle opcode 0x" + hex(op), /*unsupported=*/true);
      }
    }
  }

 private:
  // [SECTION] Reading the pickle's bytes

  [[noreturn]] void fail(const std::string& why, bool unsupported = false) const {
    zip_.fail(std::string(unsupported ? "cannot be read: its pickle " : "has a broken pickle: ") +
              why);
  }
  static std::string hex(unsigned v) {
    const char* digits = "0123456789abcdef";
    return {digits[(v >> 4) & 15], digits[v & 15]};
  }
  unsigned char byte() {
    if (p_ >= end_) fail("it ends early");
    return *p_++;
  }
  const unsigned char* bytes(std::uint64_t n) {
    if (static_cast<std::uint64_t>(end_ - p_) < n) fail("it ends early");
    const auto* q = p_;
    p_ += n;
    return q;
  }
  std::uint64_t uint(int n) {
    const auto* q = bytes(static_cast<std::uint64_t>(n));
    std::uint64_t v = 0;
    for (int k = n - 1; k >= 0; --k) v = (v << 8) | q[k];
    return v;
  }
  std::int64_t long1(std::uint64_t n) {
    if (n > 8) fail("an integer wider than 64 bits", true);
    const auto* q = bytes(n);
    std::uint64_t v = 0;
    for (std::uint64_t k = n; k-- > 0;) v = (v << 8) | q[k];
    if (n > 0 && n < 8 && (q[n - 1] & 0x80)) v |= ~std::uint64_t{0} << (8 * n);  // sign-extend
    return static_cast<std::int64_t>(v);
  }
  std::string line() {
    std::string s;
    for (unsigned char c = byte(); c != '\n'; c = byte()) s += static_cast<char>(c);
    return s;
  }

  // [SECTION] The unpickler's stack

  void push(Ref v) { stack_.push_back(std::move(v)); }
  Ref pop() {
    if (stack_.empty()) fail("the stack runs empty");
    auto v = stack_.back();
    stack_.pop_back();
    return v;
  }
  Ref top() {
    if (stack_.empty()) fail("the stack runs empty");
    return stack_.back();
  }
  Ref memo(std::uint64_t k) {
    auto it = memo_.find(k);
    if (it == memo_.end()) fail("it refers to an object it never stored");
    return it->second;
  }
  void push_bool(bool b) {
    auto v = make(Value::Kind::Bool);
    v->i = b;
    push(v);
  }
  void push_int(std::int64_t i) {
    auto v = make(Value::Kind::Int);
    v->i = i;
    push(v);
  }
  void push_text(Value::Kind kind, std::uint64_t n) {
    auto v = make(kind);
    const auto* q = bytes(n);
    v->s.assign(reinterpret_cast<const char*>(q), n);
    push(v);
  }
  void push_global(std::string name) {
    auto v = make(Value::Kind::Global);
    v->s = std::move(name);
    push(v);
  }
  // How many items sit above the topmost mark; removes the mark.
  std::size_t marked() {
    for (std::size_t k = stack_.size(); k-- > 0;)
      if (stack_[k]->kind == Value::Kind::Mark) {
        const std::size_t n = stack_.size() - k - 1;
        stack_.erase(stack_.begin() + static_cast<std::ptrdiff_t>(k));
        return n;
      }
    fail("a mark is missing");
  }
  Ref collect(Value::Kind kind, std::size_t n) {
    if (stack_.size() < n) fail("the stack runs empty");
    auto v = make(kind);
    v->items.assign(stack_.end() - static_cast<std::ptrdiff_t>(n), stack_.end());
    stack_.resize(stack_.size() - n);
    return v;
  }

  // [SECTION] Torch's storages and tensors

  static const Ref& arg(const Ref& args, std::size_t k) {
    static const Ref none = make(Value::Kind::None);
    return k < args->items.size() ? args->items[k] : none;
  }
  static std::vector<std::int64_t> ints(const Ref& tuple) {
    std::vector<std::int64_t> out;
    for (const auto& v : tuple->items) out.push_back(v->i);
    return out;
  }

  // ('storage', torch.<X>Storage, key, location, numel): the storage in <prefix>/data/<key>.
  Ref persistent(const Ref& pid) {
    if (pid->kind != Value::Kind::Tuple || pid->items.size() < 3 || arg(pid, 0)->s != "storage")
      fail("a persistent id that is not a storage");
    const std::string& cls = arg(pid, 1)->s;
    const auto dot = cls.rfind('.');
    const std::string short_name = dot == std::string::npos ? cls : cls.substr(dot + 1);
    if (!storage_dtype(short_name)) fail("a storage of type " + cls, true);
    auto v = make(Value::Kind::Storage);
    v->s = short_name;
    const auto& key = arg(pid, 2);
    v->storage_key = key->kind == Value::Kind::Int ? std::to_string(key->i) : key->s;
    return v;
  }

  Ref reduce(const Ref& callable, const Ref& args) {
    const std::string& f = callable->s;
    if (f == "collections.OrderedDict" || f == "builtins.dict" || f == "__builtin__.dict")
      return make(Value::Kind::Dict);
    if (f == "torch._utils._rebuild_tensor_v2" || f == "torch._utils._rebuild_tensor")
      return rebuild_tensor(args);
    if (f == "torch._utils._rebuild_parameter" || f == "torch._utils._rebuild_parameter_with_state")
      return arg(args, 0);
    if (f == "_codecs.encode") {
      // Protocol 2 pickles bytes as their latin-1 text: each code point is one byte.
      auto v = make(Value::Kind::Bytes);
      const std::string& t = arg(args, 0)->s;
      for (std::size_t k = 0; k < t.size(); ++k) {
        auto c = static_cast<unsigned char>(t[k]);
        if (c >= 0xC0 && k + 1 < t.size())
          c = static_cast<unsigned char>(((c & 0x1F) << 6) |
                                         (static_cast<unsigned char>(t[++k]) & 0x3F));
        v->s += static_cast<char>(c);
      }
      return v;
    }
    if (f == "builtins.bytes" || f == "__builtin__.bytes" || f == "builtins.bytearray")
      return make(Value::Kind::Bytes);
    if (f == "numpy.core.multiarray._reconstruct" || f == "numpy._core.multiarray._reconstruct") {
      auto v = make(Value::Kind::Tensor);
      v->is_array = true;
      return v;
    }
    if (f == "numpy.dtype") {
      auto v = make(Value::Kind::Dtype);
      v->s = arg(args, 0)->s;
      return v;
    }
    if (f == "numpy.core.multiarray.scalar" || f == "numpy._core.multiarray.scalar") {
      const auto& dtype = arg(args, 0);
      const auto& raw = arg(args, 1);
      auto info = numpy_dtype(dtype->s);
      if (!info || raw->s.size() != static_cast<std::size_t>(info->size))
        return make(Value::Kind::Object);
      auto v = make(Value::Kind::Float);
      v->f = element(reinterpret_cast<const unsigned char*>(raw->s.data()), info->name, info->size,
                     dtype->byte_order == '>');
      return v;
    }
    // Anything else (a configuration object, a device, ...) stays opaque.
    auto v = make(Value::Kind::Object);
    v->s = f;
    return v;
  }

  Ref rebuild_tensor(const Ref& args) {
    const auto& storage = arg(args, 0);
    if (storage->kind != Value::Kind::Storage) fail("a tensor without a storage");
    const auto info = *storage_dtype(storage->s);
    const std::int64_t offset = arg(args, 1)->i;
    const auto shape = ints(arg(args, 2)), stride = ints(arg(args, 3));
    if (shape.size() != stride.size()) fail("a tensor whose shape and strides disagree");
    const auto [data, size] = zip_.read(prefix_ + "data/" + storage->storage_key);
    auto v = make(Value::Kind::Tensor);
    v->tensor.dtype = info.name;
    v->tensor.shape = shape;
    const std::int64_t n = v->tensor.numel();
    v->tensor.values.resize(static_cast<std::size_t>(n));
    // Walk the elements in row-major order, following the strides.
    std::vector<std::int64_t> index(shape.size(), 0);
    for (std::int64_t k = 0; k < n; ++k) {
      std::int64_t at = offset;
      for (std::size_t d = 0; d < shape.size(); ++d) at += index[d] * stride[d];
      if (at < 0 || static_cast<std::size_t>(at + 1) * static_cast<std::size_t>(info.size) > size)
        fail("a tensor that reaches past its storage " + storage->storage_key);
      v->tensor.values[static_cast<std::size_t>(k)] =
          element(data + at * info.size, info.name, info.size, false);
      for (std::size_t d = shape.size(); d-- > 0;) {
        if (++index[d] < shape[d]) break;
        index[d] = 0;
      }
    }
    return v;
  }

  void build(const Ref& target, const Ref& state) {
    if (target->kind == Value::Kind::Dtype) {
      // numpy dtype state: (version, byte order, ...).
      if (state->kind == Value::Kind::Tuple && state->items.size() > 1 && !arg(state, 1)->s.empty())
        target->byte_order = arg(state, 1)->s[0];
    } else if (target->kind == Value::Kind::Tensor && target->is_array) {
      // numpy array state: (version, shape, dtype, is_fortran, data).
      const auto& dtype = arg(state, 2);
      const auto& raw = arg(state, 4);
      auto info = numpy_dtype(dtype->s);
      if (!info) fail("a numpy array of dtype " + dtype->s, true);
      if (raw->kind != Value::Kind::Bytes) fail("a numpy array of objects", true);
      auto& t = target->tensor;
      t.dtype = info->name;
      t.shape = ints(arg(state, 1));
      const bool fortran = arg(state, 3)->i != 0;
      const auto n = static_cast<std::size_t>(t.numel());
      if (raw->s.size() != n * static_cast<std::size_t>(info->size))
        fail("a numpy array whose data does not fill its shape");
      t.values.resize(n);
      const auto* bytes = reinterpret_cast<const unsigned char*>(raw->s.data());
      for (std::size_t k = 0; k < n; ++k) {
        // Row-major index k; a Fortran-ordered buffer stores the first axis fastest.
        std::size_t at = k;
        if (fortran) {
          std::size_t rest = k, stride = 1;
          at = 0;
          std::vector<std::size_t> idx(t.shape.size());
          for (std::size_t d = t.shape.size(); d-- > 0;) {
            idx[d] = rest % static_cast<std::size_t>(t.shape[d]);
            rest /= static_cast<std::size_t>(t.shape[d]);
          }
          for (std::size_t d = 0; d < t.shape.size(); ++d) {
            at += idx[d] * stride;
            stride *= static_cast<std::size_t>(t.shape[d]);
          }
        }
        t.values[k] = element(bytes + at * static_cast<std::size_t>(info->size), info->name,
                              info->size, dtype->byte_order == '>');
      }
    } else if (target->kind == Value::Kind::Object && state->kind == Value::Kind::Dict) {
      target->pairs = state->pairs;  // attributes, searched for tensors too
    }
    // A dict's state (an OrderedDict's _metadata) carries no tensors of its own.
  }

  const Zip& zip_;
  std::string prefix_;
  const unsigned char* p_;
  const unsigned char* end_;
  std::vector<Ref> stack_;
  std::map<std::uint64_t, Ref> memo_;
};

// ---------------------------------------------------------------------------------------------
// [SECTION] Reading a file

void flatten(const Ref& v, const std::string& name, PyTorchFile& out, int depth) {
  if (depth > 64) return;
  auto join = [&](const std::string& key) { return name.empty() ? key : name + "." + key; };
  switch (v->kind) {
    case Value::Kind::Tensor:
      if (out.tensors.emplace(name, v->tensor).second) out.order.push_back(name);
      break;
    case Value::Kind::Int:
    case Value::Kind::Bool:
      out.numbers[name] = static_cast<double>(v->i);
      break;
    case Value::Kind::Float:
      out.numbers[name] = v->f;
      break;
    case Value::Kind::Dict:
    case Value::Kind::Object:
      for (const auto& [k, item] : v->pairs) {
        if (k->kind == Value::Kind::String)
          flatten(item, join(k->s), out, depth + 1);
        else if (k->kind == Value::Kind::Int)
          flatten(item, join(std::to_string(k->i)), out, depth + 1);
      }
      break;
    case Value::Kind::List:
    case Value::Kind::Tuple:
      for (std::size_t k = 0; k < v->items.size(); ++k)
        flatten(v->items[k], join(std::to_string(k)), out, depth + 1);
      break;
    default:
      break;
  }
}

}  // namespace

PyTorchFile read_pytorch_file(const std::filesystem::path& path) {
  const std::string where = path.string();
  std::string bytes;
  try {
    bytes = read_regular_file(path, kMaxCheckpointBytes);
  } catch (const Error& e) {
    throw PyTorchFileError(e.what());
  }
  if (bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x80 && bytes[1] <= 5)
    throw PyTorchFileError(where +
                           ": is in PyTorch's legacy format (before 1.6); load it in PyTorch and "
                           "save it again with torch.save");
  if (bytes.size() < 4 || !(bytes[0] == 'P' && bytes[1] == 'K'))
    throw PyTorchFileError(where + ": is not a file written by torch.save (not a zip archive)");
  Zip zip(where, std::move(bytes));
  std::string prefix;
  bool found = false, torchscript = false;
  for (const auto& [name, entry] : zip.entries()) {
    const auto slash = name.find('/');
    const std::string rest = slash == std::string::npos ? name : name.substr(slash + 1);
    if (rest == "data.pkl") {
      prefix = name.substr(0, slash + 1);
      found = true;
    }
    if (rest == "constants.pkl" || rest.rfind("code/", 0) == 0) torchscript = true;
  }
  if (torchscript)
    throw PyTorchFileError(
        where +
        ": is a TorchScript module (torch.jit.save); save its state_dict with torch.save instead");
  if (!found)
    throw PyTorchFileError(where +
                           ": is a zip archive without data.pkl, so not written by torch.save");
  const auto [data, size] = zip.read(prefix + "data.pkl");
  Unpickler unpickler(zip, prefix, data, size);
  PyTorchFile out;
  flatten(unpickler.run(), "", out, 0);
  return out;
}

}  // namespace dstudio::models
