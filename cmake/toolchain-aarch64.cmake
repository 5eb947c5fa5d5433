# Cross-compile toolchain for aarch64 Linux (Debian's g++-aarch64-linux-gnu).
#
# Used with -DLES_KERNELS_ONLY=ON (the kernel library depends only on the C++
# standard library). CMAKE_CROSSCOMPILING_EMULATOR makes `ctest` run every test
# executable under qemu-aarch64 with the aarch64 sysroot as its library root.
# See scripts/test-aarch64.sh.
#
# The target is the armv8-a baseline (NEON, no dotprod) unless the cache
# variable LES_AARCH64_MARCH says otherwise, e.g. armv8.2-a+dotprod to compile
# the dotprod kernel paths (qemu-aarch64 emulates them).

set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(LES_AARCH64_TRIPLE aarch64-linux-gnu)
set(CMAKE_C_COMPILER /usr/bin/${LES_AARCH64_TRIPLE}-gcc)
set(CMAKE_CXX_COMPILER /usr/bin/${LES_AARCH64_TRIPLE}-g++)

set(LES_AARCH64_SYSROOT /usr/${LES_AARCH64_TRIPLE})
set(CMAKE_FIND_ROOT_PATH ${LES_AARCH64_SYSROOT})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

set(LES_AARCH64_MARCH "armv8-a" CACHE STRING "-march for the aarch64 cross build")
set(CMAKE_C_FLAGS_INIT "-march=${LES_AARCH64_MARCH}")
set(CMAKE_CXX_FLAGS_INIT "-march=${LES_AARCH64_MARCH}")

set(CMAKE_CROSSCOMPILING_EMULATOR "qemu-aarch64;-L;${LES_AARCH64_SYSROOT}")
