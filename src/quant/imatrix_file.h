// Importance matrices (imatrix): for every weight matrix, the sum of squared
// activations entering each input column, with the number of rows (tokens)
// summed; for a routed-expert tensor one such row per expert, counting only
// the tokens routed to it. Quantisers weight each column's error by the mean
// (sum / count), so columns that carry large activations are kept precise.
//
// Files, both llama.cpp's so either tool reads the other's:
// - GGUF (llama-imatrix's default): general.type = "imatrix", imatrix.datasets
//   (array of strings), imatrix.chunk_count, imatrix.chunk_size (u32); per
//   matrix NAME two F32 tensors NAME.in_sum2 {n_cols, n_mat} and NAME.counts
//   {1, n_mat} (n_mat = n_expert for expert tensors, else 1).
// - legacy .dat: i32 n_entries; per entry i32 name length, name bytes, i32
//   ncall, i32 nval, nval f32 = mean x ncall; then optionally i32 chunk count,
//   i32 dataset length and the dataset name.
//
// Thread-safety: plain values.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "util/status.h"

namespace les::quant {

struct ImatrixEntry {
  int64_t n_cols = 0;           // input width of the matrix
  std::vector<double> sums;     // n_mat x n_cols, sum of x^2 per column
  std::vector<int64_t> counts;  // n_mat: rows accumulated per matrix (expert)
  int64_t n_mat() const { return static_cast<int64_t>(counts.size()); }
  // Per-column mean squared activation, n_mat x n_cols floats; a matrix with
  // no rows gets 1 everywhere (no preference), as llama-quantize does.
  std::vector<float> importance() const;
};

struct Imatrix {
  std::map<std::string, ImatrixEntry> entries;  // by weight tensor name
  std::vector<std::string> datasets;
  uint32_t chunk_count = 0;
  uint32_t chunk_size = 0;
  bool legacy = false;  // read from a .dat file (counts are ncall per entry)

  // Adds rows of activations `x` (n_rows x n_cols) to `name`'s matrix `mat`
  // (an expert id, or 0) of `n_mat` matrices. Errors: invalid_argument when the
  // entry exists with another width or matrix count, or mat is out of range.
  Status accumulate(const std::string& name, int64_t mat, int64_t n_mat, const float* x, int64_t n_rows,
                    int64_t n_cols);
};

// The largest imatrix file read_imatrix() takes: 4 GiB (an imatrix holds one
// float per input column of every matrix and expert: a small fraction of its
// model's weights, which are themselves bytes per column and row).
inline constexpr uint64_t kMaxImatrixBytes = 4ull << 30;

// Reads either format (GGUF when the file starts with "GGUF"). Errors: io,
// invalid_argument (not a regular file: a FIFO, a device; larger than
// kMaxImatrixBytes), format (naming the entry and what is wrong: a .in_sum2
// without .counts, sizes that disagree, negative counts, non-finite values,
// truncation).
Result<Imatrix> read_imatrix(const std::string& path);

// Writes GGUF (to path.tmp, then renamed). Errors: io.
Status write_imatrix_gguf(const Imatrix& im, const std::string& path);

// Writes the legacy form (to path.tmp, then renamed), with `chunk_size`
// tokens per call for ncall = ceil(max count / chunk_size). Errors: io.
Status write_imatrix_dat(const Imatrix& im, const std::string& path);

}  // namespace les::quant
