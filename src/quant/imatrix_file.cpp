// Importance matrices and their files; see imatrix_file.h.
#include "quant/imatrix_file.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>

#include "core/gguf/gguf_reader.h"
#include "core/gguf/gguf_writer.h"
#include "util/bounded_read.h"

namespace les::quant {
namespace {

constexpr const char* kSums = ".in_sum2";
constexpr const char* kCounts = ".counts";

bool strip_suffix(std::string& s, const char* suffix) {
  const size_t n = std::strlen(suffix);
  if (s.size() <= n || s.compare(s.size() - n, n, suffix) != 0) return false;
  s.resize(s.size() - n);
  return true;
}

Result<Imatrix> read_gguf(const std::string& path) {
  auto f = gguf::GgufFile::open(path);
  if (!f.ok()) return f.status();
  const gguf::GgufFile& g = **f;
  Imatrix im;
  if (const gguf::Value* v = g.find("imatrix.datasets"); v != nullptr && v->as_array() != nullptr)
    for (uint64_t i = 0; i < v->as_array()->count; ++i)
      if (const std::string* s = v->as_array()->string_at(i)) im.datasets.push_back(*s);
  im.chunk_count = static_cast<uint32_t>(g.get_uint_or("imatrix.chunk_count", 0).ok() ? *g.get_uint_or("imatrix.chunk_count", 0) : 0);
  im.chunk_size = static_cast<uint32_t>(g.get_uint_or("imatrix.chunk_size", 0).ok() ? *g.get_uint_or("imatrix.chunk_size", 0) : 0);
  std::map<std::string, std::pair<const gguf::TensorInfo*, const gguf::TensorInfo*>> pairs;
  for (const gguf::TensorInfo& t : g.tensors()) {
    std::string name = t.name;
    if (strip_suffix(name, kSums)) pairs[name].first = &t;
    else if (strip_suffix(name, kCounts)) pairs[name].second = &t;
  }
  if (pairs.empty()) return format_error(path + ": no imatrix entries (.in_sum2 / .counts tensors)");
  for (const auto& [name, p] : pairs) {
    if (p.first == nullptr || p.second == nullptr)
      return format_error(path + ": entry '" + name + "' has " + (p.first ? "sums but no counts" : "counts but no sums"));
    const gguf::TensorInfo& s = *p.first;
    const gguf::TensorInfo& c = *p.second;
    if (s.type != GgmlType::F32 || c.type != GgmlType::F32)
      return format_error(path + ": entry '" + name + "' is not F32");
    const int64_t n_mat = c.n_elements();
    if (n_mat <= 0 || s.ne[1] * s.ne[2] * s.ne[3] != n_mat)
      return format_error(path + ": entry '" + name + "': " + std::to_string(n_mat) + " counts for " +
                          std::to_string(s.ne[1] * s.ne[2] * s.ne[3]) + " rows of sums");
    ImatrixEntry e;
    e.n_cols = s.ne[0];
    const auto sb = g.tensor_data(s);
    const auto cb = g.tensor_data(c);
    e.sums.resize(static_cast<size_t>(s.n_elements()));
    for (size_t i = 0; i < e.sums.size(); ++i) {
      float v;
      std::memcpy(&v, sb.data() + 4 * i, 4);
      if (!std::isfinite(v) || v < 0)
        return format_error(path + ": entry '" + name + "': sum " + std::to_string(i) + " is " + std::to_string(v));
      e.sums[i] = v;
    }
    for (int64_t j = 0; j < n_mat; ++j) {
      float v;
      std::memcpy(&v, cb.data() + 4 * j, 4);
      if (!std::isfinite(v) || v < 0)
        return format_error(path + ": entry '" + name + "': count " + std::to_string(j) + " is " + std::to_string(v));
      e.counts.push_back(std::llround(v));
    }
    im.entries.emplace(name, std::move(e));
  }
  return im;
}

// A little-endian reader over a whole file with bounds checks.
struct ByteReader {
  const std::string& bytes;
  size_t pos = 0;
  bool i32(int32_t* v) {
    if (bytes.size() - pos < 4) return false;
    std::memcpy(v, bytes.data() + pos, 4);
    pos += 4;
    return true;
  }
};

Result<Imatrix> read_dat(const std::string& path, const std::string& bytes) {
  Imatrix im;
  im.legacy = true;
  ByteReader r{bytes};
  int32_t n = 0;
  if (!r.i32(&n) || n <= 0 || n > (1 << 20))
    return format_error(path + ": not an imatrix (neither GGUF nor a legacy .dat with a plausible entry count)");
  for (int32_t k = 0; k < n; ++k) {
    int32_t len = 0, ncall = 0, nval = 0;
    if (!r.i32(&len) || len <= 0 || len > 4096 || bytes.size() - r.pos < static_cast<size_t>(len))
      return format_error(path + ": entry " + std::to_string(k) + ": bad or truncated name");
    std::string name = bytes.substr(r.pos, static_cast<size_t>(len));
    r.pos += static_cast<size_t>(len);
    if (!r.i32(&ncall) || !r.i32(&nval) || ncall < 0 || nval <= 0 ||
        (bytes.size() - r.pos) / 4 < static_cast<size_t>(nval))
      return format_error(path + ": entry '" + name + "': bad or truncated header or values");
    ImatrixEntry e;
    e.n_cols = nval;
    e.sums.resize(static_cast<size_t>(nval));
    for (int32_t i = 0; i < nval; ++i) {
      float v;
      std::memcpy(&v, bytes.data() + r.pos + 4 * static_cast<size_t>(i), 4);
      if (!std::isfinite(v) || v < 0) return format_error(path + ": entry '" + name + "': non-finite or negative value");
      e.sums[static_cast<size_t>(i)] = v;
    }
    r.pos += 4 * static_cast<size_t>(nval);
    e.counts = {ncall};
    im.entries[name] = std::move(e);
  }
  int32_t chunks = 0, dlen = 0;
  if (r.i32(&chunks)) im.chunk_count = static_cast<uint32_t>(std::max(chunks, 0));
  if (r.i32(&dlen) && dlen > 0 && bytes.size() - r.pos >= static_cast<size_t>(dlen))
    im.datasets.push_back(bytes.substr(r.pos, static_cast<size_t>(dlen)));
  return im;
}

Status write_bytes_atomically(const std::string& path, const std::string& bytes) {
  const std::string tmp = path + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) return io_error("cannot create " + tmp + ": " + std::strerror(errno));
  const bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  if (std::fclose(f) != 0 || !ok) {
    std::remove(tmp.c_str());
    return io_error("cannot write " + tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return io_error("cannot rename " + tmp + " to " + path + ": " + std::strerror(errno));
  }
  return Status();
}

}  // namespace

std::vector<float> ImatrixEntry::importance() const {
  std::vector<float> out(sums.size(), 1.0f);
  for (int64_t j = 0; j < n_mat(); ++j) {
    if (counts[static_cast<size_t>(j)] <= 0) continue;
    const double c = static_cast<double>(counts[static_cast<size_t>(j)]);
    const int64_t cols = static_cast<int64_t>(sums.size()) / n_mat();
    for (int64_t i = 0; i < cols; ++i)
      out[static_cast<size_t>(j * cols + i)] = static_cast<float>(sums[static_cast<size_t>(j * cols + i)] / c);
  }
  return out;
}

Status Imatrix::accumulate(const std::string& name, int64_t mat, int64_t n_mat, const float* x, int64_t n_rows,
                           int64_t n_cols) {
  if (mat < 0 || mat >= n_mat) return invalid_argument_error(name + ": matrix " + std::to_string(mat) + " of " + std::to_string(n_mat));
  ImatrixEntry& e = entries[name];
  if (e.counts.empty()) {
    e.n_cols = n_cols;
    e.counts.assign(static_cast<size_t>(n_mat), 0);
    e.sums.assign(static_cast<size_t>(n_mat * n_cols), 0.0);
  } else if (e.n_cols != n_cols || e.n_mat() != n_mat) {
    return invalid_argument_error(name + ": activations of width " + std::to_string(n_cols) + " x " +
                                  std::to_string(n_mat) + " matrices, earlier " + std::to_string(e.n_cols) + " x " +
                                  std::to_string(e.n_mat()));
  }
  double* s = e.sums.data() + mat * n_cols;
  for (int64_t r = 0; r < n_rows; ++r) {
    const float* row = x + r * n_cols;
    for (int64_t i = 0; i < n_cols; ++i) s[i] += static_cast<double>(row[i]) * row[i];
  }
  e.counts[static_cast<size_t>(mat)] += n_rows;
  return Status();
}

Result<Imatrix> read_imatrix(const std::string& path) {
  // A regular file of at most kMaxImatrixBytes (util/bounded_read.h): /dev/zero
  // or a FIFO is refused before anything is read.
  BoundedRead r;
  r.what = "imatrix";
  r.max_bytes = kMaxImatrixBytes;
  r.max_reason = "the limit of an imatrix file";
  r.regular_only = true;
  LES_ASSIGN_OR_RETURN(const std::string bytes, read_bounded(path, r));
  if (bytes.size() >= 4 && bytes.compare(0, 4, "GGUF") == 0) return read_gguf(path);
  return read_dat(path, bytes);
}

Status write_imatrix_gguf(const Imatrix& im, const std::string& path) {
  gguf::GgufWriter w;
  Status s = w.set_string("general.type", "imatrix");
  if (s.ok()) s = w.set_array_strings("imatrix.datasets", im.datasets);
  if (s.ok()) s = w.set_u32("imatrix.chunk_count", im.chunk_count);
  if (s.ok()) s = w.set_u32("imatrix.chunk_size", im.chunk_size);
  for (const auto& [name, e] : im.entries) {  // std::map: sorted names, as llama-imatrix stores them
    if (!s.ok()) break;
    std::vector<float> sums(e.sums.begin(), e.sums.end());
    std::vector<float> counts(e.counts.begin(), e.counts.end());
    const int64_t ne_s[2] = {e.n_cols, e.n_mat()};
    const int64_t ne_c[2] = {1, e.n_mat()};
    s = w.add_tensor(name + kSums, GgmlType::F32, ne_s, sums.data(), sums.size() * 4);
    if (s.ok()) s = w.add_tensor(name + kCounts, GgmlType::F32, ne_c, counts.data(), counts.size() * 4);
  }
  if (!s.ok()) return s;
  return w.write_to_file(path);
}

Status write_imatrix_dat(const Imatrix& im, const std::string& path) {
  std::string out;
  auto put = [&out](int32_t v) { out.append(reinterpret_cast<const char*>(&v), 4); };
  put(static_cast<int32_t>(im.entries.size()));
  const int64_t chunk = std::max<int64_t>(im.chunk_size, 1);
  for (const auto& [name, e] : im.entries) {
    put(static_cast<int32_t>(name.size()));
    out += name;
    const int64_t max_count = e.counts.empty() ? 0 : *std::max_element(e.counts.begin(), e.counts.end());
    const int32_t ncall = im.legacy ? static_cast<int32_t>(max_count) : static_cast<int32_t>((max_count + chunk - 1) / chunk);
    put(ncall);
    put(static_cast<int32_t>(e.sums.size()));
    const std::vector<float> mean = e.importance();
    for (const float m : mean) {
      const float v = m * static_cast<float>(ncall);
      out.append(reinterpret_cast<const char*>(&v), 4);
    }
  }
  put(static_cast<int32_t>(im.chunk_count));
  const std::string ds = im.datasets.empty() ? std::string() : im.datasets.back();
  put(static_cast<int32_t>(ds.size()));
  out += ds;
  return write_bytes_atomically(path, out);
}

}  // namespace les::quant
