// The pre-tokenizer names llama.cpp 81ff7abe accepts (llama-vocab.cpp), the
// type each maps onto, and each type's stages.
//
// Patterns are the models' own (their tokenizer.json pre_tokenizer), written
// in the form whose llama.cpp semantics (split_regex.h) is what llama.cpp
// computes: possessive quantifiers as greedy ones (bailingmoe), and for the
// case-split letter classes of gpt-4o / tekken / granite-embed-multi-97m the
// lookahead form llama.cpp uses, (?:(?=\p{L})[^a-z]) for "a letter that is not
// an ASCII lowercase letter" (with \p{Lu}-style classes llama.cpp has no case
// split at all, which is what it computes for youtu and tiny_aya).
#include "core/tokenizer/pre_tokenizer_names.h"

namespace les {

namespace {

// The contraction alternatives, case-insensitive (ASCII).
#define LES_CONTRACTIONS "(?i:'s|'t|'re|'ve|'m|'ll|'d)"

const char* const kWhitespaceTail = R"re(|\s*[\r\n]+|\s+(?!\S)|\s+)re";

// DeepSeek-LLM's letter class: the cased letters of the Unicode version its tokenizer was made with.
const char* const kDeepseekLetters =
    R"re(\s?[A-Za-z\u00B5\u00C0-\u00D6\u00D8-\u00F6\u00F8-\u01BA\u01BC-\u01BF\u01C4-\u0293\u0295-\u02AF)re"
    R"re(\u0370-\u0373\u0376\u0377\u037B-\u037D\u037F\u0386\u0388-\u038A\u038C\u038E-\u03A1\u03A3-\u03F5)re"
    R"re(\u03F7-\u0481\u048A-\u052F\u0531-\u0556\u10A0-\u10C5\u13A0-\u13F5\u13F8-\u13FD\u1C90-\u1CBA)re"
    R"re(\u1CBD-\u1CBF\u1D00-\u1D2B\u1D6B-\u1D77\u1D79-\u1D9A\u1E00-\u1F15\u1F18-\u1F1D\u1F20-\u1F45)re"
    R"re(\u1F48-\u1F4D\u1F50-\u1F57\u1F59\u1F5B\u1F5D\u1F5F-\u1F7D\u1F80-\u1FB4\u1FB6-\u1FBC\u1FBE)re"
    R"re(\u1FC2-\u1FC4\u1FC6-\u1FCC\u1FD0-\u1FD3\u1FD6-\u1FDB\u1FE0-\u1FEC\u1FF2-\u1FF4\u1FF6-\u1FFC)re"
    R"re(\u2102\u2107\u210A-\u2113\u2115\u2119-\u211D\u2124\u2126\u2128\u212A-\u212D\u212F-\u2134\u2139)re"
    R"re(\u213C-\u213F\u2145-\u2149\u214E\u2183\u2184\u2C00-\u2C7B\u2C7E-\u2CE4\u2CEB-\u2CEE\u2CF2\u2CF3)re"
    R"re(\uA640-\uA66D\uA680-\uA69B\uA722-\uA76F\uA771-\uA787\uA78B-\uA78E\uAB70-\uABBF\uFB00-\uFB06)re"
    R"re(\uFB13-\uFB17\uFF21-\uFF3A\uFF41-\uFF5A\u{10400}-\u{1044F}\u{104B0}-\u{104D3}\u{104D8}-\u{104FB})re"
    R"re(\u{10C80}-\u{10CB2}\u{10CC0}-\u{10CF2}\u{118A0}-\u{118DF}\u{1E900}-\u{1E943}]+)re";

// DeepSeek-V3's main pattern (also afmoe's): ASCII punctuation + ASCII word,
// letters with their marks, punctuation/symbol runs, whitespace.
const char* const kDeepseekV3Main =
    R"re([!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";

// Bloom / Poro / GPT-3 Finnish: anything but whitespace and a few sentence marks.
const char* const kBloom = R"re( ?[^(\s|.,!?\u2026\u3002\uFF0C\u3001\u0964\u06D4\u060C)]+)re";

std::string gpt4o_like(const char* letter) {
  // [^\r\n\p{L}\p{N}]?  upper* lower+ contraction?  |  ... upper+ lower* contraction?
  const std::string up = std::string("(?:(?=") + letter + ")[^a-z])";
  const std::string lo = std::string("(?:(?=") + letter + ")[^A-Z])";
  return R"re([^\r\n\p{L}\p{N}]?)re" + up + "*" + lo + "+" LES_CONTRACTIONS "?" + R"re(|[^\r\n\p{L}\p{N}]?)re" +
         up + "+" + lo + "*" LES_CONTRACTIONS "?" + R"re(|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*)re" +
         kWhitespaceTail;
}

// Letter runs with the Lu/Ll split of o200k-style patterns, as llama.cpp reads
// them (every \p{L..} class is all letters).
std::string cased_letters(const char* digits) {
  const char* upper = R"re([\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}])re";
  const char* lower = R"re([\p{Ll}\p{Lm}\p{Lo}\p{M}])re";
  return std::string(R"re([^\r\n\p{L}\p{N}]?)re") + upper + "*" + lower + "+" LES_CONTRACTIONS "?" +
         R"re(|[^\r\n\p{L}\p{N}]?)re" + upper + "+" + lower + "*" LES_CONTRACTIONS "?" + "|" + digits +
         R"re(| ?[^\s\p{L}\p{N}]+[\r\n/]*)re" + kWhitespaceTail;
}

StageDef re(std::string p) { return StageDef{nullptr, std::move(p)}; }
StageDef custom(CustomSplit f) { return StageDef{f, {}}; }

}  // namespace

const std::vector<TypeDef>& pre_tokenizer_types() {
  static const std::vector<TypeDef> types = {
      {"default",
       {re(R"re([\p{P}\$\+<=>\^~\|]+)re"), custom(split_gpt2), re(R"re(\p{N}+)re"), re("[0-9][0-9][0-9]")}},
      {"llama3", {custom(split_llama3)}},
      {"jais-2",
       {re(LES_CONTRACTIONS R"re(|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+)re"
           R"re(|\s{512}(?!\S)|\s{256}(?!\S)|\s{128}(?!\S)|\s{64}(?!\S)|\s{32}(?!\S)|\s{16}(?!\S)|\s{8}(?!\S))re"
           R"re(|\s{4}(?!\S)|\s{1,2}(?!\S)|\s{1})re")}},
      {"deepseek-llm",
       {re(R"re([\r\n])re"), re(kDeepseekLetters), re(R"re(\s?[!-/:-~\uFF01-\uFF0F\uFF1A-\uFF5E\u2018-\u201F\u3000-\u3002]+)re"), re(R"re(\s+$)re"),
        re(R"re([\u4E00-\u9FA5\u0800-\u4E00\uAC00-\uD7FF]+)re"), re(R"re(\p{N}+)re")}},
      {"deepseek-v3", {re(R"re(\p{N}{1,3})re"), re(R"re([\u4E00-\u9FA5\u3040-\u309F\u30A0-\u30FF]+)re"), re(kDeepseekV3Main)}},
      {"youtu",
       {re(R"re([\uAC00-\uD7A3\u3131-\u318E]+|[\uFF01\u2026\u201C\u201D\u2018\u2019\u2014\uFF1A\uFF1B\uFF0C\u3001-\u303F\uFE30-\uFE4F]+)re"
           R"re(|[\u3105-\u312F]+|[\u4E00-\u9FA5\u3040-\u309F\u30A0-\u30FF]+)re"), re(cased_letters(R"re(\p{N})re"))}},
      {"deepseek-coder",
       {re(R"re([\r\n])re"), re(R"re(\s?\p{L}+)re"), re(R"re(\s?\p{P}+)re"), re(R"re([\u4E00-\u9FA5\u0800-\u4E00\uAC00-\uD7FF]+)re"),
        re(R"re(\p{N})re")}},
      {"falcon", {re(R"re([\p{P}\$\+<=>\^~\|`]+)re"), custom(split_gpt2), re("[0-9][0-9][0-9]")}},
      {"starcoder", {re(R"re(\p{N})re"), custom(split_gpt2)}},
      {"gpt2", {custom(split_gpt2)}},
      {"qwen2", {custom(split_qwen2)}},
      {"qwen35", {custom(split_qwen35)}},
      {"bloom", {re(kBloom)}},
      {"viking", {re(kBloom), re(R"re(\p{N})re")}},
      {"tekken",
       {re(R"re([^\r\n\p{L}\p{N}]?(?:(?=\p{L})[^a-z])*(?:(?=\p{L})[^A-Z])+)re"
           R"re(|[^\r\n\p{L}\p{N}]?(?:(?=\p{L})[^a-z])+(?:(?=\p{L})[^A-Z])*)re"
           R"re(|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)re")}},
      {"chameleon",
       {re("<sentinel:[0-9]+>"), re("(IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z"), re("([\t\n]|    |  )"),
        re(R"re(\p{N})re"), re(R"re([\p{P}!-/:-@\[-`{-~])re"), custom(split_gpt2)}},
      {"gpt-4o", {re(gpt4o_like(R"re(\p{L})re"))}},
      {"granite-embed-multi", {re(gpt4o_like(R"re([\p{L}\p{M}])re"))}},
      {"tiny_aya", {custom(split_digit_groups), re(cased_letters(R"re(\p{N}{1,3})re"))}},
      {"kimi-k2", {custom(split_kimi_k2)}},
      {"superbpe", {re(R"re(\p{N}+)re"), re(R"re((?=(\d{3})+(?!\d)))re")}},
      {"bailingmoe",
       {re(R"re('(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n])re"
           R"re(|\s+(?!\S)|\s+)re")}},
      {"seed-coder",
       {re(LES_CONTRACTIONS R"re(|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1}| ?[^\s\p{L}\p{N}\r\n]+)re" +
           std::string(kWhitespaceTail))}},
      {"afmoe",
       {custom(split_digit_groups),
        re(R"re([\u4E00-\u9FFF\u3400-\u4DBF\u8C48-\uFAFF\u3040-\u309F\u30A0-\u30FF\uFF65-\uFF9F\u2F00-\u2FDF)re"
           R"re(\u0E40-\u0E7F\u0E80-\u0EFF\u1780-\u17FF\u1000-\u109F\uAA60-\uAA7F\uA9E0-\uA9FF\uAC00-\uD7AF\u1100-\u11FF]+)re"), re(kDeepseekV3Main)}},
      {"exaone-moe",
       {re(LES_CONTRACTIONS R"re(|[^\r\n\p{L}\p{N}]?(?:\p{L}\p{M}*(?: \p{L}\p{M}*)*)+|\p{N})re"
           R"re(| ?[^\s\p{L}\p{N}]+[\r\n/]?|\s*[\r\n]|\s+(?!\S)|\s+)re")}},
      {"gemma4", {custom(split_newline_runs)}},
      {"sarvam-moe", {custom(split_newline_runs)}},
      {"minicpm5",
       {re(R"re(\p{N}{1,3})re"),
        re(LES_CONTRACTIONS R"re(|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}+| ?[^\s\p{L}\p{N}]+[\r\n]*)re" +
           std::string(kWhitespaceTail))}},
      {"whitespace", {re(R"re(\S+)re")}},
  };
  return types;
}

const std::vector<NameDef>& pre_tokenizer_name_table() {
  // Traits: {ignore_merges, byte_encode, escape_spaces, newline_tokens, add_bos_default, force_add_bos}.
  constexpr PreTokenizerTraits kPlain{};
  constexpr PreTokenizerTraits kIgnoreMerges{true};
  constexpr PreTokenizerTraits kLlama3{true, true, false, false, true, false};
  constexpr PreTokenizerTraits kAddBos{false, true, false, false, true, false};
  constexpr PreTokenizerTraits kGemma4{false, false, true, true, false, true};
  constexpr PreTokenizerTraits kSpmStyle{false, false, true, false, false, false};
  constexpr PreTokenizerTraits kRawUtf8{false, false, false, false, false, false};
  static const std::vector<NameDef> names = {
      {"default", "default", kPlain},
      {"minicpm5", "minicpm5", kIgnoreMerges},  // MiniCPM 5
      // Llama 3, Falcon 3 / H1, Pixtral, Mi:dm 2.0, LFM2, Jina v5 nano
      {"llama3", "llama3", kLlama3}, {"llama-v3", "llama3", kLlama3}, {"llama-bpe", "llama3", kLlama3},
      {"falcon3", "llama3", kLlama3}, {"falcon-h1", "llama3", kLlama3}, {"pixtral", "llama3", kLlama3},
      {"midm-2.0", "llama3", kLlama3}, {"lfm2", "llama3", kLlama3}, {"jina-v5-nano", "llama3", kLlama3},
      {"deepseek-llm", "deepseek-llm", kPlain},
      {"deepseek-coder", "deepseek-coder", kPlain},
      {"deepseek-v3", "deepseek-v3", kPlain},  // DeepSeek V3 / R1
      {"youtu", "youtu", kIgnoreMerges},
      {"falcon", "falcon", kPlain},
      {"mpt", "gpt2", kPlain},
      {"starcoder", "starcoder", kPlain},
      {"gpt-2", "gpt2", kPlain}, {"phi-2", "gpt2", kPlain}, {"jina-es", "gpt2", kPlain},
      {"jina-de", "gpt2", kPlain}, {"gigachat", "gpt2", kPlain}, {"jina-v2-es", "gpt2", kPlain},
      {"jina-v2-de", "gpt2", kPlain}, {"a.x-4.0", "gpt2", kPlain}, {"mellum", "gpt2", kPlain},
      {"modern-bert", "gpt2", kPlain},
      {"jais-2", "jais-2", kPlain},
      {"gemma4", "gemma4", kGemma4}, {"granite-embed-multi-311m", "gemma4", kGemma4},
      {"sarvam-moe", "sarvam-moe", kSpmStyle},
      {"jina-v1-en", "gpt2", kPlain}, {"jina-v2-code", "gpt2", kPlain}, {"roberta-bpe", "gpt2", kPlain},
      {"whitespace", "whitespace", kRawUtf8},
      {"refact", "starcoder", kPlain},
      {"command-r", "starcoder", kPlain},
      // Qwen2 / Qwen3, DeepSeek-R1 distills, KORMo, F2LLM v2
      {"qwen2", "qwen2", kPlain}, {"deepseek-r1-qwen", "qwen2", kPlain}, {"kormo", "qwen2", kPlain},
      {"f2llmv2", "qwen2", kPlain},
      {"qwen35", "qwen35", kPlain},  // Qwen3.5 / 3.6, MiniCPM-V 4.6
      {"stablelm2", "qwen2", kPlain},
      {"olmo", "gpt2", kPlain},
      {"dbrx", "llama3", kPlain},
      {"smaug-bpe", "llama3", kPlain},
      {"poro-chat", "bloom", kPlain},
      {"glm4", "llama3", kPlain}, {"chatglm-bpe", "llama3", kPlain},  // GLM-4 (llama.cpp's CHATGLM4 type)
      {"viking", "viking", kPlain},
      {"jais", "gpt2", kPlain},
      {"tekken", "tekken", kLlama3},  // Mistral Nemo / Tekken: ignore_merges and BOS too
      {"smollm", "starcoder", kPlain},
      {"codeshell", "starcoder", kPlain},
      {"bloom", "bloom", kPlain},
      {"gpt3-finnish", "bloom", kPlain},
      {"exaone", "starcoder", kPlain},
      {"exaone4", "gpt2", kPlain},
      {"exaone-moe", "exaone-moe", kPlain},
      {"chameleon", "chameleon", kAddBos},
      {"minerva-7b", "starcoder", kPlain},
      {"megrez", "qwen2", kPlain},
      {"gpt-4o", "gpt-4o", kPlain}, {"llama4", "gpt-4o", kPlain}, {"kanana2", "gpt-4o", kPlain},
      {"talkie", "gpt-4o", kPlain},
      {"granite-embed-multi-97m", "granite-embed-multi", kIgnoreMerges},
      {"tiny_aya", "tiny_aya", kPlain}, {"cohere2moe", "tiny_aya", kPlain},
      {"superbpe", "superbpe", kPlain},
      {"trillion", "gpt2", kPlain},
      {"granite-docling", "gpt2", kPlain},
      {"bailingmoe", "bailingmoe", kPlain}, {"bailingmoe2", "bailingmoe", kPlain},
      {"llada-moe", "bailingmoe", kPlain},
      {"seed-coder", "seed-coder", kPlain},
      {"hunyuan", "qwen2", kPlain},
      {"hunyuan-dense", "deepseek-v3", kPlain},
      {"joyai-llm", "deepseek-v3", kPlain},
      {"kimi-k2", "kimi-k2", kPlain},
      {"grok-2", "qwen2", kPlain},  // its pattern is qwen2's, so llama.cpp runs the qwen2 splitter
      {"afmoe", "afmoe", kPlain},
      {"minimax-m2", "gpt-4o", kPlain},
      {"solar-open", "qwen2", kPlain},
      {"mellum2", "starcoder", kPlain},
  };
  return names;
}

}  // namespace les
