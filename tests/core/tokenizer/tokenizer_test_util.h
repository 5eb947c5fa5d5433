// Shared by the tokenizer tests: a Tokenizer from a vocab-only GGUF fixture.
#pragma once

#include <catch2/catch.hpp>

#include <memory>
#include <string>

#include "core/gguf/gguf_reader.h"
#include "core/tokenizer/tokenizer.h"

namespace les::test {

// Reads the tokenizer.* metadata of `gguf_path` (no tensor data); REQUIREs success.
inline std::unique_ptr<Tokenizer> load_tokenizer(const std::string& gguf_path) {
  auto file = gguf::GgufFile::open(gguf_path, gguf::ReadOptions{.use_mmap = false});
  INFO(gguf_path << ": " << file.status().to_string());
  REQUIRE(file.ok());
  auto tok = Tokenizer::from_gguf(**file);
  INFO(gguf_path << ": " << tok.status().to_string());
  REQUIRE(tok.ok());
  return std::move(tok).value();
}

}  // namespace les::test
