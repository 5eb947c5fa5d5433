// The saved state of a Context (a session), for pausing a conversation and
// resuming it later, in this process or another: Context::save_state() and
// Context::load_state(), the C API's les_context_state_*.
//
// Format (little-endian; version 1):
//   magic "LESSTATE" (8 bytes), u32 format version, u32 section count,
//   u64 model fingerprint (model_fingerprint() below),
//   sections, each: u32 tag, u32 reserved (0), u64 payload bytes, payload
//     tag 1 "tokens": i32 n_past, i32 pending (-1 = none), n_past x i32 ids
//                     (-1 = a position filled from an embedding row)
//     tag 2 "kv cache": u32 ggml type, u32 n_layer, u32 n_embd_k, u32 n_embd_v,
//                       u32 n_past, u32 layers with K/V, then per such layer
//                       (ascending) n_past K rows followed by n_past V rows
//                       (rows as KvCache stores them; a hybrid model's
//                       linear-attention layers have none)
//     tag 3 "recurrent" (only for a model with linear-attention layers, and
//                       then required): u32 d_conv, conv_channels, n_k_heads,
//                       n_v_heads, head_dim, u32 layer count, then per
//                       recurrent layer (ascending): u32 layer index,
//                       (d_conv - 1) x conv_channels f32 conv state,
//                       n_v_heads x head_dim^2 f32 delta-rule state
//                       (recurrent_state.h)
//     (a version-1 reader refuses any other tag, naming it)
//   u64 FNV-1a 64 checksum of every byte before it.
// A state restores into a context of the same model (fingerprint), KV cache
// type and shape, with n_ctx >= n_past + pending; the tokens, pending token,
// KV rows and recurrent state then equal the saved context's, so generation continues with
// the same tokens as if the state had never left the context. The logits are
// not saved: continue with a prompt or with the pending token.
//
// Errors name what does not match: another model (both fingerprints), another
// KV cache type or shape, too little room (n_ctx), a newer format version, a
// truncated or corrupted file (checksum), an unknown section.
//
// Thread-safety: pure functions over the arguments.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "core/model/model.h"

namespace les {

inline constexpr uint32_t kSessionStateVersion = 1;

// A 64-bit FNV-1a digest of what makes a model's KV cache meaningful: the
// architecture, every metadata key with its type and scalar value (arrays by
// element type and length), every tensor's name, type and shape, and the
// first and last 4 KiB of token_embd.weight and output.weight (when mapped).
// Two files with the same fingerprint have the same shapes and the same
// embedding bytes sampled; a re-quantised or retrained file differs.
uint64_t model_fingerprint(const Model& model);

// The bytes a saved state starts with ("LESSTATE").
inline constexpr size_t kSessionStateMagicBytes = 8;
// OK when `head` starts with the magic; format_error otherwise (naming a GGUF
// file, the likely mix-up). Lets a reader refuse a file of another kind
// before reading the rest of it.
Status check_state_magic(std::span<const uint8_t> head);

}  // namespace les
