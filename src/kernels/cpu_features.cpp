// CPUID + XGETBV feature detection; see cpu_features.h.
#include "kernels/cpu_features.h"

#include <cstdint>

#if defined(__x86_64__) || defined(_M_X64)
#include <cpuid.h>
#endif

namespace les::kernels {

#if defined(__x86_64__) || defined(_M_X64)
namespace {

struct CpuidRegs {
  uint32_t eax = 0, ebx = 0, ecx = 0, edx = 0;
};

CpuidRegs cpuid(uint32_t leaf, uint32_t subleaf) {
  CpuidRegs r;
  __cpuid_count(leaf, subleaf, r.eax, r.ebx, r.ecx, r.edx);
  return r;
}

// XGETBV with ECX=0 (XCR0). Only valid when CPUID.1:ECX.OSXSAVE[27] is set.
// Encoded as bytes so this TU needs no -mxsave flag.
uint64_t read_xcr0() {
  uint32_t lo = 0, hi = 0;
  __asm__ volatile(".byte 0x0f, 0x01, 0xd0" : "=a"(lo), "=d"(hi) : "c"(0));
  return (static_cast<uint64_t>(hi) << 32) | lo;
}

bool bit(uint32_t v, int b) { return (v >> b) & 1u; }

}  // namespace

CpuFeatures detect_cpu_features() noexcept {
  CpuFeatures f;
  const uint32_t max_leaf = __get_cpuid_max(0, nullptr);
  if (max_leaf < 1) return f;
  const CpuidRegs l1 = cpuid(1, 0);
  const bool osxsave = bit(l1.ecx, 27);
  const bool cpu_avx = bit(l1.ecx, 28);
  uint64_t xcr0 = 0;
  if (osxsave) xcr0 = read_xcr0();
  // XCR0 bit 1 = SSE state, bit 2 = AVX (upper YMM) state.
  const bool os_ymm = osxsave && (xcr0 & 0x6) == 0x6;
  // Bits 5,6,7 = opmask, ZMM_Hi256, Hi16_ZMM.
  const bool os_zmm = os_ymm && (xcr0 & 0xE0) == 0xE0;

  CpuidRegs l7;
  if (max_leaf >= 7) l7 = cpuid(7, 0);

  const bool avx = cpu_avx && os_ymm;
  f.has_avx2 = avx && bit(l7.ebx, 5);
  f.has_fma = avx && bit(l1.ecx, 12);
  f.has_f16c = avx && bit(l1.ecx, 29);
  f.has_bmi2 = bit(l7.ebx, 8);
  f.has_avx512f = os_zmm && bit(l7.ebx, 16);
  f.has_avx512dq = f.has_avx512f && bit(l7.ebx, 17);
  f.has_avx512bw = f.has_avx512f && bit(l7.ebx, 30);
  f.has_avx512vl = f.has_avx512f && bit(l7.ebx, 31);
  f.has_avx512_vnni = f.has_avx512f && bit(l7.ecx, 11);
  return f;
}

#else

CpuFeatures detect_cpu_features() noexcept {
  CpuFeatures f;
#if defined(__aarch64__)
  f.has_neon = true;  // AdvSIMD is mandatory in AArch64
#endif
  return f;
}

#endif

std::string cpu_features_string(const CpuFeatures& f) {
  std::string s;
  auto add = [&s](bool on, const char* name) {
    if (!on) return;
    if (!s.empty()) s += ' ';
    s += name;
  };
  add(f.has_avx2, "avx2");
  add(f.has_fma, "fma");
  add(f.has_f16c, "f16c");
  add(f.has_bmi2, "bmi2");
  add(f.has_avx512f, "avx512f");
  add(f.has_avx512bw, "avx512bw");
  add(f.has_avx512dq, "avx512dq");
  add(f.has_avx512vl, "avx512vl");
  add(f.has_avx512_vnni, "avx512_vnni");
  add(f.has_neon, "neon");
  if (s.empty()) s = "(none)";
  return s;
}

}  // namespace les::kernels
