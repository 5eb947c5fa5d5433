// CPU feature detection for kernel dispatch.
//
// On x86-64 the flags come from CPUID *and* XGETBV: a vector extension counts
// as present only when the CPU reports it and the OS has enabled saving of its
// register state (XCR0 bits: SSE+AVX for YMM; additionally opmask, ZMM_Hi256
// and Hi16_ZMM for AVX-512). On aarch64 NEON (AdvSIMD) is mandatory, so it is
// a compile-time fact. Sources: Intel SDM vol. 2A (CPUID leaf 1 and 7) and
// vol. 1 section 13.3 (XCR0 / "enabling the XSAVE feature set").
//
// This translation unit is compiled without any -m flags, so it is safe to call
// on every CPU; it is what runs before any ISA-specific code (DEVELOPERS.md, Conventions: kernels).
//
// Thread-safety: detect_cpu_features() is pure (reads CPU registers only).
#pragma once

#include <string>

namespace les::kernels {

struct CpuFeatures {
  bool has_avx2 = false;         // AVX2 usable (CPU + OS YMM state)
  bool has_fma = false;          // FMA3 usable (needs YMM state)
  bool has_f16c = false;         // F16C usable (needs YMM state)
  bool has_bmi2 = false;         // BMI2 (scalar, no OS state needed)
  bool has_avx512f = false;      // AVX-512 Foundation usable (CPU + OS opmask/ZMM state)
  bool has_avx512bw = false;     // AVX-512 BW usable
  bool has_avx512dq = false;     // AVX-512 DQ usable
  bool has_avx512vl = false;     // AVX-512 VL usable
  bool has_avx512_vnni = false;  // AVX-512 VNNI (vpdpbusd) usable
  bool has_neon = false;         // aarch64 AdvSIMD (always true on aarch64)
};

// Detects the features of the running CPU and OS. Cheap (a few CPUID calls);
// callers that need it often should keep the result.
CpuFeatures detect_cpu_features() noexcept;

// "avx2 fma f16c avx512f ..." : the usable features, for logs and benches.
std::string cpu_features_string(const CpuFeatures& f);

}  // namespace les::kernels
