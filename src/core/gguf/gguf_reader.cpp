#include "core/gguf/gguf_reader.h"

#include "core/gguf/gguf_key_rules.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <limits>
#include <unordered_map>

#include <fmt/format.h>

namespace les::gguf {

static_assert(std::endian::native == std::endian::little, "the GGUF reader assumes a little-endian host");

namespace {

constexpr uint32_t kMagic = 0x46554747;  // "GGUF" read as a little-endian u32
constexpr uint64_t kMaxKeyBytes = 65535;
constexpr uint64_t kMaxTensorNameBytes = 64;  // spec: tensor names are at most 64 bytes
constexpr int kMaxArrayDepth = 8;             // nesting of ARRAY inside ARRAY
// Smallest encodings, used to bound counts by the bytes that remain before allocating.
constexpr uint64_t kMinKvBytes = 8 + 4 + 1;          // empty key, type, one-byte value
constexpr uint64_t kMinTensorInfoBytes = 8 + 4 + 4 + 8;  // empty name, n_dims 0, type, offset
constexpr uint64_t kMinArrayElemBytes = 4 + 8;       // nested array: type + count

bool mul_overflows(uint64_t a, uint64_t b, uint64_t* out) { return __builtin_mul_overflow(a, b, out); }
bool add_overflows(uint64_t a, uint64_t b, uint64_t* out) { return __builtin_add_overflow(a, b, out); }

// Names a field for error messages ("key 'x'[3] length") as a chain of
// segments, formatted only when an error is reported: parsing a 150k-token
// vocabulary must not build 150k strings.
class Field {
 public:
  // Implicit from names; the referenced text must outlive the Field (a
  // temporary std::string argument lives until the end of the call).
  Field(std::string_view root) : text_(root) {}    // NOLINT
  Field(const char* root) : text_(root) {}         // NOLINT
  Field(const std::string& root) : text_(root) {}  // NOLINT
  Field with(std::string_view suffix) const { return Field(this, suffix, 0, false); }
  Field at(uint64_t index) const { return Field(this, {}, index, true); }
  std::string str() const {
    std::string s = parent_ != nullptr ? parent_->str() : std::string();
    if (is_index_) s += fmt::format("[{}]", index_);
    else s += text_;
    return s;
  }

 private:
  Field(const Field* parent, std::string_view text, uint64_t index, bool is_index)
      : parent_(parent), text_(text), index_(index), is_index_(is_index) {}
  const Field* parent_ = nullptr;
  std::string_view text_;
  uint64_t index_ = 0;
  bool is_index_ = false;
};

// A bounds-checked little-endian cursor over the file image. Every read
// checks the remaining bytes first; errors name the field and byte offset.
class Cursor {
 public:
  Cursor(const uint8_t* data, uint64_t size) : d_(data), n_(size) {}

  uint64_t pos() const noexcept { return pos_; }
  uint64_t remaining() const noexcept { return n_ - pos_; }

  Status error_at(uint64_t at, const std::string& what) const {
    return format_error(fmt::format("{} (at byte {})", what, at));
  }
  Status error(const std::string& what) const { return error_at(pos_, what); }

  template <typename T>
  Status read(T* v, const Field& field) {
    if (remaining() < sizeof(T))
      return error(fmt::format("{}: file ends after {} bytes, {} more needed", field.str(), n_, sizeof(T)));
    std::memcpy(v, d_ + pos_, sizeof(T));
    pos_ += sizeof(T);
    return {};
  }

  // A GGUF string: u64 length + bytes. `max_len` bounds it further (0 = only by the file).
  Status read_string(std::string* s, const Field& field, uint64_t max_len = 0) {
    const uint64_t at = pos_;
    uint64_t len = 0;
    LES_RETURN_IF_ERROR(read(&len, field.with(" length")));
    if (max_len != 0 && len > max_len)
      return error_at(at, fmt::format("{}: length {} exceeds the limit of {}", field.str(), len, max_len));
    if (len > remaining())
      return error_at(at, fmt::format("{}: length {} exceeds the {} bytes left in the file", field.str(), len,
                                      remaining()));
    s->assign(reinterpret_cast<const char*>(d_ + pos_), static_cast<size_t>(len));
    pos_ += len;
    return {};
  }

  // Copies n bytes (n already checked against remaining()).
  void take(uint8_t* dst, uint64_t n) {
    if (n != 0) std::memcpy(dst, d_ + pos_, static_cast<size_t>(n));
    pos_ += n;
  }

 private:
  const uint8_t* d_;
  uint64_t n_;
  uint64_t pos_ = 0;
};

std::string quote_name(const std::string& s) {
  // Names come from the file: keep messages printable and short.
  std::string out;
  for (size_t i = 0; i < s.size() && i < 80; ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7f) out.push_back(static_cast<char>(c));
    else out += fmt::format("\\x{:02x}", c);
  }
  if (s.size() > 80) out += "...";
  return "'" + out + "'";
}

Status read_value(Cursor& c, ValueType type, int depth, const Field& field, Value* out);

Status read_type(Cursor& c, const Field& field, ValueType* out) {
  const uint64_t at = c.pos();
  uint32_t t = 0;
  LES_RETURN_IF_ERROR(c.read(&t, field.with(" type")));
  if (t >= kValueTypeCount) return c.error_at(at, fmt::format("{}: unknown value type {}", field.str(), t));
  *out = static_cast<ValueType>(t);
  return {};
}

Status read_array(Cursor& c, int depth, const Field& field, Value* out) {
  if (depth >= kMaxArrayDepth)
    return c.error(fmt::format("{}: arrays nested deeper than {}", field.str(), kMaxArrayDepth));
  Array a;
  LES_RETURN_IF_ERROR(read_type(c, field.with(" element"), &a.elem_type));
  const uint64_t count_at = c.pos();
  LES_RETURN_IF_ERROR(c.read(&a.count, field.with(" element count")));
  const uint64_t rem = c.remaining();
  if (Array::is_packed_type(a.elem_type)) {
    const uint64_t sz = value_type_size(a.elem_type);
    uint64_t bytes = 0;
    if (mul_overflows(a.count, sz, &bytes) || bytes > rem)
      return c.error_at(count_at, fmt::format("{}: {} elements of {} exceed the {} bytes left in the file",
                                              field.str(), a.count, value_type_name(a.elem_type), rem));
    a.packed.resize(static_cast<size_t>(bytes));
    c.take(a.packed.data(), bytes);
    if (a.elem_type == ValueType::BOOL) {
      for (uint64_t i = 0; i < a.count; ++i)
        if (a.packed[i] > 1)
          return c.error_at(c.pos() - bytes + i,
                            fmt::format("{}[{}]: BOOL byte {} is neither 0 nor 1", field.str(), i, a.packed[i]));
    }
  } else {
    const uint64_t min_elem = a.elem_type == ValueType::STRING ? 8 : kMinArrayElemBytes;
    if (a.count > rem / min_elem)
      return c.error_at(count_at, fmt::format("{}: {} elements of {} cannot fit in the {} bytes left in the file",
                                              field.str(), a.count, value_type_name(a.elem_type), rem));
    a.items.reserve(static_cast<size_t>(a.count));
    for (uint64_t i = 0; i < a.count; ++i) {
      Value v;
      LES_RETURN_IF_ERROR(read_value(c, a.elem_type, depth + 1, field.at(i), &v));
      a.items.push_back(std::move(v));
    }
  }
  *out = Value::from_array(std::move(a));
  return {};
}

Status read_value(Cursor& c, ValueType type, int depth, const Field& field, Value* out) {
  switch (type) {
    case ValueType::UINT8: { uint8_t v{}; LES_RETURN_IF_ERROR(c.read(&v, field)); *out = Value::from_uint(type, v); return {}; }
    case ValueType::UINT16: { uint16_t v{}; LES_RETURN_IF_ERROR(c.read(&v, field)); *out = Value::from_uint(type, v); return {}; }
    case ValueType::UINT32: { uint32_t v{}; LES_RETURN_IF_ERROR(c.read(&v, field)); *out = Value::from_uint(type, v); return {}; }
    case ValueType::UINT64: { uint64_t v{}; LES_RETURN_IF_ERROR(c.read(&v, field)); *out = Value::from_uint(type, v); return {}; }
    case ValueType::INT8: { int8_t v{}; LES_RETURN_IF_ERROR(c.read(&v, field)); *out = Value::from_int(type, v); return {}; }
    case ValueType::INT16: { int16_t v{}; LES_RETURN_IF_ERROR(c.read(&v, field)); *out = Value::from_int(type, v); return {}; }
    case ValueType::INT32: { int32_t v{}; LES_RETURN_IF_ERROR(c.read(&v, field)); *out = Value::from_int(type, v); return {}; }
    case ValueType::INT64: { int64_t v{}; LES_RETURN_IF_ERROR(c.read(&v, field)); *out = Value::from_int(type, v); return {}; }
    case ValueType::FLOAT32: { float v{}; LES_RETURN_IF_ERROR(c.read(&v, field)); *out = Value::from_float(type, v); return {}; }
    case ValueType::FLOAT64: { double v{}; LES_RETURN_IF_ERROR(c.read(&v, field)); *out = Value::from_float(type, v); return {}; }
    case ValueType::BOOL: {
      const uint64_t at = c.pos();
      uint8_t v;
      LES_RETURN_IF_ERROR(c.read(&v, field));
      if (v > 1) return c.error_at(at, fmt::format("{}: BOOL byte {} is neither 0 nor 1", field.str(), v));
      *out = Value::from_bool(v != 0);
      return {};
    }
    case ValueType::STRING: {
      std::string s;
      LES_RETURN_IF_ERROR(c.read_string(&s, field));
      *out = Value::from_string(std::move(s));
      return {};
    }
    case ValueType::ARRAY: return read_array(c, depth, field, out);
  }
  return c.error(fmt::format("{}: unknown value type {}", field.str(), static_cast<uint32_t>(type)));
}

}  // namespace

uint64_t TensorInfo::row_bytes() const noexcept {
  auto r = ggml_row_bytes(type, ne[0]);
  return r ? *r : 0;
}

struct GgufFile::Impl {
  std::string path;
  uint32_t version = 0;
  uint64_t alignment = kDefaultAlignment;
  uint64_t data_offset = 0;
  uint64_t file_size = 0;
  std::vector<KeyValue> metadata;
  std::unordered_map<std::string, size_t> key_index;
  std::vector<TensorInfo> tensors;
  std::unordered_map<std::string, size_t> tensor_index;
  // Byte offsets of each key and tensor info, for error messages during parsing.
  std::vector<uint64_t> key_at;
  std::vector<uint64_t> tensor_info_at;
  const uint8_t* data = nullptr;  // file image (mapping or caller's buffer); null when unmapped
  void* map = nullptr;            // our mmap, if any
  size_t map_size = 0;

  ~Impl() {
    if (map != nullptr) ::munmap(map, map_size);
  }

  Status parse(const uint8_t* d, uint64_t n);
  Status parse_tensor_info(Cursor& c, uint64_t index);
};

Status GgufFile::Impl::parse_tensor_info(Cursor& c, uint64_t index) {
  TensorInfo t;
  tensor_info_at.push_back(c.pos());
  const std::string field = fmt::format("tensor {}", index);
  LES_RETURN_IF_ERROR(c.read_string(&t.name, field + " name", kMaxTensorNameBytes));
  const std::string ctx = fmt::format("tensor {} {}", index, quote_name(t.name));
  if (t.name.empty()) return c.error(field + ": empty name");

  const uint64_t dims_at = c.pos();
  LES_RETURN_IF_ERROR(c.read(&t.n_dims, ctx + " n_dims"));
  if (t.n_dims == 0 || t.n_dims > kMaxDims)
    return c.error_at(dims_at, fmt::format("{}: n_dims {} is not in 1..{}", ctx, t.n_dims, kMaxDims));
  uint64_t n_elements = 1;
  for (uint32_t d = 0; d < t.n_dims; ++d) {
    const uint64_t at = c.pos();
    uint64_t ne = 0;
    LES_RETURN_IF_ERROR(c.read(&ne, fmt::format("{} ne[{}]", ctx, d)));
    if (ne == 0) return c.error_at(at, fmt::format("{}: ne[{}] is zero", ctx, d));
    if (ne > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) || mul_overflows(n_elements, ne, &n_elements) ||
        n_elements > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      return c.error_at(at, fmt::format("{}: element count overflows at ne[{}] = {}", ctx, d, ne));
    t.ne[d] = static_cast<int64_t>(ne);
  }

  const uint64_t type_at = c.pos();
  uint32_t type_id = 0;
  LES_RETURN_IF_ERROR(c.read(&type_id, ctx + " type"));
  const auto traits = ggml_type_traits(type_id);
  if (!traits) return c.error_at(type_at, fmt::format("{}: unknown ggml type {}", ctx, type_id));
  t.type = static_cast<GgmlType>(type_id);
  if (t.ne[0] % traits->block_size != 0)
    return c.error_at(type_at, fmt::format("{}: ne[0] = {} is not a multiple of the {} block size {}", ctx, t.ne[0],
                                           traits->name, traits->block_size));
  // n_rows <= n_elements < 2^63 cannot overflow; the byte products can.
  const uint64_t n_rows = static_cast<uint64_t>(t.ne[1]) * static_cast<uint64_t>(t.ne[2]) * static_cast<uint64_t>(t.ne[3]);
  uint64_t row = 0;
  if (mul_overflows(static_cast<uint64_t>(t.ne[0] / traits->block_size), traits->block_bytes, &row) ||
      mul_overflows(row, n_rows, &t.n_bytes))
    return c.error_at(type_at, fmt::format("{}: byte size overflows", ctx));

  const uint64_t off_at = c.pos();
  LES_RETURN_IF_ERROR(c.read(&t.data_offset, ctx + " offset"));
  if (t.data_offset % alignment != 0)
    return c.error_at(off_at, fmt::format("{}: offset {} is not aligned to {}", ctx, t.data_offset, alignment));

  if (!tensor_index.emplace(t.name, tensors.size()).second)
    return c.error_at(off_at, fmt::format("{}: duplicate tensor name", ctx));
  tensors.push_back(std::move(t));
  return {};
}

Status GgufFile::Impl::parse(const uint8_t* d, uint64_t n) {
  file_size = n;
  Cursor c(d, n);
  uint32_t magic = 0;
  LES_RETURN_IF_ERROR(c.read(&magic, "header magic"));
  if (magic != kMagic) {
    return c.error_at(0, fmt::format("header: magic {:02x} {:02x} {:02x} {:02x} is not \"GGUF\"", magic & 0xff,
                                     (magic >> 8) & 0xff, (magic >> 16) & 0xff, magic >> 24));
  }
  LES_RETURN_IF_ERROR(c.read(&version, "header version"));
  if (version == 1)
    return unsupported_error("header: GGUF version 1 is not supported (only 2 and 3) (at byte 4)");
  if (version == 0 || version > 3) {
    const bool swapped = (version & 0xffff) == 0 && (version >> 24) >= 1 && (version >> 24) <= 3;
    return unsupported_error(fmt::format("header: GGUF version {} is not supported{} (at byte 4)", version,
                                         swapped ? " (big-endian file)" : " (only 2 and 3)"));
  }
  uint64_t n_tensors = 0, n_kv = 0;
  const uint64_t nt_at = c.pos();
  LES_RETURN_IF_ERROR(c.read(&n_tensors, "header n_tensors"));
  const uint64_t nkv_at = c.pos();
  LES_RETURN_IF_ERROR(c.read(&n_kv, "header n_kv"));
  if (n_kv > c.remaining() / kMinKvBytes)
    return c.error_at(nkv_at, fmt::format("header: n_kv {} cannot fit in the {} bytes left in the file", n_kv,
                                          c.remaining()));
  if (n_tensors > c.remaining() / kMinTensorInfoBytes)
    return c.error_at(nt_at, fmt::format("header: n_tensors {} cannot fit in the {} bytes left in the file",
                                         n_tensors, c.remaining()));

  metadata.reserve(static_cast<size_t>(n_kv));
  for (uint64_t i = 0; i < n_kv; ++i) {
    const uint64_t kv_at = c.pos();
    KeyValue kv;
    LES_RETURN_IF_ERROR(c.read_string(&kv.key, fmt::format("key {}", i), kMaxKeyBytes));
    if (kv.key.empty()) return c.error_at(kv_at, fmt::format("key {}: empty key", i));
    const std::string field = fmt::format("key {}", quote_name(kv.key));
    ValueType type;
    LES_RETURN_IF_ERROR(read_type(c, field, &type));
    LES_RETURN_IF_ERROR(read_value(c, type, 0, field, &kv.value));
    if (Status s = check_well_known_key(kv.key, kv.value); !s.ok()) return c.error_at(kv_at, s.message());
    if (!key_index.emplace(kv.key, metadata.size()).second)
      return c.error_at(kv_at, fmt::format("{}: duplicate key", field));
    if (kv.key == "general.alignment") alignment = kv.value.raw_uint();
    metadata.push_back(std::move(kv));
    key_at.push_back(kv_at);
  }

  // Token arrays must agree in length with the token list.
  if (auto it = key_index.find("tokenizer.ggml.tokens"); it != key_index.end()) {
    const uint64_t n_tokens = metadata[it->second].value.as_array()->count;
    for (const char* k : {"tokenizer.ggml.scores", "tokenizer.ggml.token_type"}) {
      auto jt = key_index.find(k);
      if (jt != key_index.end() && metadata[jt->second].value.as_array()->count != n_tokens)
        return c.error_at(key_at[jt->second],
                          fmt::format("key '{}' has {} elements but tokenizer.ggml.tokens has {}", k,
                                      metadata[jt->second].value.as_array()->count, n_tokens));
    }
  }

  tensors.reserve(static_cast<size_t>(n_tensors));
  for (uint64_t i = 0; i < n_tensors; ++i) LES_RETURN_IF_ERROR(parse_tensor_info(c, i));

  // The data section starts at the next multiple of the alignment.
  const uint64_t end_of_infos = c.pos();
  uint64_t padded = 0;
  if (add_overflows(end_of_infos, alignment - 1, &padded))
    return c.error("data section: offset overflows");
  data_offset = padded / alignment * alignment;
  if (!tensors.empty() && data_offset > n)
    return c.error(fmt::format("data section: starts at {} past the end of the file ({} bytes)", data_offset, n));
  const uint64_t data_size = data_offset <= n ? n - data_offset : 0;

  for (size_t i = 0; i < tensors.size(); ++i) {
    TensorInfo& t = tensors[i];
    uint64_t end = 0;
    if (add_overflows(t.data_offset, t.n_bytes, &end) || end > data_size)
      return c.error_at(tensor_info_at[i],
                        fmt::format("tensor {} {}: bytes [{}, +{}) extend past the end of the data section ({} bytes)",
                                    i, quote_name(t.name), t.data_offset, t.n_bytes, data_size));
    t.file_offset = data_offset + t.data_offset;
  }
  // No two tensors may share bytes.
  std::vector<size_t> order(tensors.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return tensors[a].data_offset < tensors[b].data_offset; });
  for (size_t k = 1; k < order.size(); ++k) {
    const TensorInfo& prev = tensors[order[k - 1]];
    const TensorInfo& cur = tensors[order[k]];
    if (prev.data_offset + prev.n_bytes > cur.data_offset)
      return c.error_at(tensor_info_at[order[k]],
                        fmt::format("tensor {} {}: bytes at offset {} overlap tensor {} {} (offset {}, {} bytes)",
                                    order[k], quote_name(cur.name), cur.data_offset, order[k - 1],
                                    quote_name(prev.name), prev.data_offset, prev.n_bytes));
  }
  return {};
}

GgufFile::GgufFile() : impl_(std::make_unique<Impl>()) {}
GgufFile::~GgufFile() = default;

Result<std::unique_ptr<GgufFile>> GgufFile::parse(const uint8_t* data, size_t size) {
  if (data == nullptr && size != 0) return invalid_argument_error("GgufFile::parse: null buffer");
  std::unique_ptr<GgufFile> f(new GgufFile());
  static const uint8_t kEmpty = 0;
  f->impl_->data = data != nullptr ? data : &kEmpty;
  LES_RETURN_IF_ERROR(f->impl_->parse(f->impl_->data, size));
  return f;
}

Result<std::unique_ptr<GgufFile>> GgufFile::open(const std::string& path, const ReadOptions& opts) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return io_error(fmt::format("cannot open '{}': {}", path, std::strerror(errno)));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int e = errno;
    ::close(fd);
    return io_error(fmt::format("cannot stat '{}': {}", path, std::strerror(e)));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return io_error(fmt::format("'{}' is not a regular file", path));
  }
  std::unique_ptr<GgufFile> f(new GgufFile());
  Impl& im = *f->impl_;
  im.path = path;
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  static const uint8_t kEmpty = 0;
  if (size == 0) {
    im.data = &kEmpty;
  } else {
    void* m = ::mmap(nullptr, static_cast<size_t>(size), PROT_READ, MAP_PRIVATE, fd, 0);
    if (m == MAP_FAILED) {
      const int e = errno;
      ::close(fd);
      return io_error(fmt::format("cannot mmap '{}' ({} bytes): {}", path, size, std::strerror(e)));
    }
    im.map = m;
    im.map_size = static_cast<size_t>(size);
    im.data = static_cast<const uint8_t*>(m);
  }
  ::close(fd);
  Status s = im.parse(im.data, size);
  if (!s.ok()) return s.with_context(fmt::format("'{}'", path));
  if (!opts.use_mmap && im.map != nullptr) {
    // Metadata only: drop the mapping (only the header pages were touched).
    ::munmap(im.map, im.map_size);
    im.map = nullptr;
    im.map_size = 0;
    im.data = nullptr;
  }
  return f;
}

const std::string& GgufFile::path() const noexcept { return impl_->path; }
uint32_t GgufFile::version() const noexcept { return impl_->version; }
uint64_t GgufFile::alignment() const noexcept { return impl_->alignment; }
uint64_t GgufFile::data_offset() const noexcept { return impl_->data_offset; }
uint64_t GgufFile::file_size() const noexcept { return impl_->file_size; }
const std::vector<KeyValue>& GgufFile::metadata() const noexcept { return impl_->metadata; }
const std::vector<TensorInfo>& GgufFile::tensors() const noexcept { return impl_->tensors; }

const Value* GgufFile::find(std::string_view key) const noexcept {
  auto it = impl_->key_index.find(std::string(key));
  return it == impl_->key_index.end() ? nullptr : &impl_->metadata[it->second].value;
}

const TensorInfo* GgufFile::find_tensor(std::string_view name) const noexcept {
  auto it = impl_->tensor_index.find(std::string(name));
  return it == impl_->tensor_index.end() ? nullptr : &impl_->tensors[it->second];
}

std::span<const uint8_t> GgufFile::tensor_data(const TensorInfo& t) const noexcept {
  if (impl_->data == nullptr || t.n_bytes == 0) return {};
  // t.file_offset + t.n_bytes <= file_size was checked during parsing for our tensors;
  // recheck for a TensorInfo the caller built.
  if (t.file_offset > impl_->file_size || t.n_bytes > impl_->file_size - t.file_offset) return {};
  return {impl_->data + t.file_offset, static_cast<size_t>(t.n_bytes)};
}

std::string GgufFile::architecture() const {
  const Value* v = find("general.architecture");
  const std::string* s = v != nullptr ? v->as_string() : nullptr;
  return s != nullptr ? *s : std::string();
}

namespace {
Status missing(std::string_view key) { return format_error(fmt::format("key '{}' is missing", key)); }
Status wrong_type(std::string_view key, const Value& v, const char* expected) {
  return format_error(fmt::format("key '{}' has type {}, expected {}", key, value_type_name(v.type()), expected));
}
}  // namespace

Result<uint64_t> GgufFile::get_uint_or(std::string_view key, uint64_t def) const {
  const Value* v = find(key);
  if (v == nullptr) return def;
  if (auto u = v->as_uint()) return *u;
  if (v->as_int()) return format_error(fmt::format("key '{}' = {} is negative, expected an unsigned integer", key, *v->as_int()));
  return wrong_type(key, *v, "an unsigned integer");
}

Result<uint64_t> GgufFile::get_uint(std::string_view key) const {
  if (find(key) == nullptr) return missing(key);
  return get_uint_or(key, 0);
}

Result<int64_t> GgufFile::get_int(std::string_view key) const {
  const Value* v = find(key);
  if (v == nullptr) return missing(key);
  if (auto i = v->as_int()) return *i;
  if (v->as_uint()) return format_error(fmt::format("key '{}' = {} does not fit in int64", key, *v->as_uint()));
  return wrong_type(key, *v, "an integer");
}

Result<double> GgufFile::get_float_or(std::string_view key, double def) const {
  const Value* v = find(key);
  if (v == nullptr) return def;
  if (auto f = v->as_float()) return *f;
  return wrong_type(key, *v, "a number");
}

Result<double> GgufFile::get_float(std::string_view key) const {
  if (find(key) == nullptr) return missing(key);
  return get_float_or(key, 0);
}

Result<bool> GgufFile::get_bool_or(std::string_view key, bool def) const {
  const Value* v = find(key);
  if (v == nullptr) return def;
  if (auto b = v->as_bool()) return *b;
  return wrong_type(key, *v, "BOOL");
}

Result<bool> GgufFile::get_bool(std::string_view key) const {
  if (find(key) == nullptr) return missing(key);
  return get_bool_or(key, false);
}

Result<std::string> GgufFile::get_string_or(std::string_view key, std::string def) const {
  const Value* v = find(key);
  if (v == nullptr) return def;
  if (const std::string* s = v->as_string()) return *s;
  return wrong_type(key, *v, "STRING");
}

Result<std::string> GgufFile::get_string(std::string_view key) const {
  if (find(key) == nullptr) return missing(key);
  return get_string_or(key, {});
}

Result<const Array*> GgufFile::get_array(std::string_view key) const {
  const Value* v = find(key);
  if (v == nullptr) return missing(key);
  if (const Array* a = v->as_array()) return a;
  return wrong_type(key, *v, "ARRAY");
}

}  // namespace les::gguf
