# The kernel library: block formats, scalar reference (de)quantisation, dot
# products per instruction set, runtime dispatch, thread pool, matvec/matmul.
# It depends on nothing beyond the C++ standard library so it can be
# cross-built for aarch64 and tested under qemu.
#
# One translation unit per instruction set (DEVELOPERS.md, Conventions: kernels): files under
# src/kernels/x86/avx2*.cpp get only the AVX2 flags, src/kernels/x86/avx512*.cpp
# only the AVX-512 flags, src/kernels/arm/*dotprod*.cpp only +dotprod; nothing
# from them may run before cpu_features (or neon_dotprod_supported) says so.

file(GLOB LES_KERNEL_SOURCES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/src/kernels/*.cpp)
set(LES_KERNEL_ISA_SOURCES)
if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64|amd64")
  file(GLOB LES_AVX2_SOURCES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/src/kernels/x86/avx2*.cpp)
  file(GLOB LES_AVX512_SOURCES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/src/kernels/x86/avx512*.cpp)
  set_source_files_properties(${LES_AVX2_SOURCES} PROPERTIES COMPILE_OPTIONS "-mavx2;-mfma;-mf16c;-mbmi2")
  set_source_files_properties(${LES_AVX512_SOURCES} PROPERTIES COMPILE_OPTIONS
      "-mavx512f;-mavx512bw;-mavx512dq;-mavx512vl;-mavx512vnni;-mavx2;-mfma;-mf16c;-mbmi2")
  list(APPEND LES_KERNEL_ISA_SOURCES ${LES_AVX2_SOURCES} ${LES_AVX512_SOURCES})
elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "aarch64|arm64|ARM64")
  file(GLOB LES_NEON_SOURCES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/src/kernels/arm/*.cpp)
  # arm/*dotprod*.cpp: the SDOT kernel variants, selected at run time (HWCAP_ASIMDDP).
  file(GLOB LES_NEON_DOTPROD_SOURCES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/src/kernels/arm/*dotprod*.cpp)
  set_source_files_properties(${LES_NEON_DOTPROD_SOURCES} PROPERTIES COMPILE_OPTIONS "-march=armv8.2-a+dotprod")
  list(APPEND LES_KERNEL_ISA_SOURCES ${LES_NEON_SOURCES})
  # The i-quant kernels keep the reference's float steps (ref_iquants.h): no FMA contraction.
  set_property(SOURCE ${CMAKE_SOURCE_DIR}/src/kernels/arm/neon_iquants.cpp
               ${CMAKE_SOURCE_DIR}/src/kernels/arm/neon_iquants_dotprod.cpp APPEND PROPERTY COMPILE_OPTIONS "-ffp-contract=off")
endif()

# The weight quantisers' scale-search kernels promise sums without FMA (kernels.h,
# FitKernels), which the SIMD tiers reproduce bit for bit; GCC would otherwise
# contract a multiply and an add (intrinsics included) into an FMA wherever the
# target has one (AVX2 TUs, every aarch64 build). The i-quant reference
# (ref_iquants.h) and its AVX2 kernels promise the same of their float sums.
set_property(SOURCE ${CMAKE_SOURCE_DIR}/src/kernels/ref_quant_fit.cpp ${CMAKE_SOURCE_DIR}/src/kernels/x86/avx2_quant_fit.cpp
             ${CMAKE_SOURCE_DIR}/src/kernels/ref_iquants.cpp ${CMAKE_SOURCE_DIR}/src/kernels/x86/avx2_iquants.cpp
             APPEND PROPERTY COMPILE_OPTIONS "-ffp-contract=off")
# Dot products whose SIMD tiers keep the reference's float steps bit for bit
# (IQ4_XS, TQ1_0, TQ2_0: one multiply and one add per super-block): no tier,
# the scalar reference on aarch64 included, may fuse them.
# MXFP4's quantiser compares errors in double, so its bytes never depend on
# the target either.
file(GLOB LES_KERNEL_ORDERED_SOURCES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/src/kernels/ref_codebook4.cpp
     ${CMAKE_SOURCE_DIR}/src/kernels/ref_ternary.cpp ${CMAKE_SOURCE_DIR}/src/kernels/x86/*ternary*.cpp
     ${CMAKE_SOURCE_DIR}/src/kernels/arm/*ternary*.cpp
     ${CMAKE_SOURCE_DIR}/src/kernels/ref_quantize_mxfp4.cpp
     ${CMAKE_SOURCE_DIR}/src/kernels/x86/*codebook4*.cpp ${CMAKE_SOURCE_DIR}/src/kernels/arm/*codebook4*.cpp)
set_property(SOURCE ${LES_KERNEL_ORDERED_SOURCES} APPEND PROPERTY COMPILE_OPTIONS "-ffp-contract=off")
# RoPE and the GeGLU table spell out with std::fma exactly the contractions of
# ggml's x86 build (kernels/rope.cpp, geglu.cpp); nothing else may be fused.
set_property(SOURCE ${CMAKE_SOURCE_DIR}/src/kernels/rope.cpp ${CMAKE_SOURCE_DIR}/src/kernels/geglu.cpp
             APPEND PROPERTY COMPILE_OPTIONS "-ffp-contract=off")
# The vision ops' SIMD LayerNorm (kernels/layer_norm_chunks.h) repeats the
# reference's element-wise operations one rounding each, as the reference (built
# without FMA flags) does.
if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64|amd64")
  set_property(SOURCE ${CMAKE_SOURCE_DIR}/src/kernels/x86/avx2_vision_ops.cpp
               ${CMAKE_SOURCE_DIR}/src/kernels/x86/avx512_vision_ops.cpp APPEND PROPERTY COMPILE_OPTIONS "-ffp-contract=off")
endif()

find_package(Threads REQUIRED)
add_library(les_kernels_obj OBJECT ${LES_KERNEL_SOURCES} ${LES_KERNEL_ISA_SOURCES})
target_include_directories(les_kernels_obj PUBLIC ${CMAKE_SOURCE_DIR}/src)
target_link_libraries(les_kernels_obj PUBLIC Threads::Threads)
set_target_properties(les_kernels_obj PROPERTIES CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)

# Static kernel library on its own (the aarch64 cross build and kernel tests).
add_library(les_kernels STATIC $<TARGET_OBJECTS:les_kernels_obj>)
target_link_libraries(les_kernels PUBLIC les_kernels_obj)
