# Compiler flags and the resolution of the INFERD_* options.

add_compile_options(-Wall -Wextra -Wno-unused-parameter)

if(INFERD_NATIVE)
  add_compile_options(-march=native)
endif()

# libFuzzer targets (tests/fuzz): a separate clang build tree, made and run by tests/fuzz/run-fuzz.sh.
option(INFERD_FUZZ "Build the libFuzzer targets (clang only)" OFF)
if(INFERD_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "INFERD_FUZZ=ON needs clang: configure with CC=clang CXX=clang++")
  endif()
  # Everything a fuzz target links is coverage-instrumented and checked by ASan + UBSan.
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()

if(INFERD_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()

# Compile time. The tests' own files spend their run time in the libraries, so they are built
# at -O1 in a release tree (a third less compile time than -O3). The sanitizer and fuzzing trees
# are built for their checks, not their speed: line tables only (-g1: symbolized stack traces,
# no variable locations) and -O1 halve the compile time of RelWithDebInfo's -O2 -g; the tests'
# files at -O0 there (40% less again), the CPU backend's kernels at -O2 (the sanitizer
# tests run models through them). Later options win, so these override the build type's flags.
set(INFERD_TEST_COMPILE_OPTIONS $<$<CONFIG:Release>:-O1>)
set(INFERD_KERNEL_COMPILE_OPTIONS "")
if(INFERD_SANITIZE OR INFERD_FUZZ)
  add_compile_options($<$<COMPILE_LANGUAGE:C,CXX>:-O1> $<$<COMPILE_LANGUAGE:C,CXX>:-g1>)
  set(INFERD_KERNEL_COMPILE_OPTIONS -O2)
  if(INFERD_SANITIZE)
    set(INFERD_TEST_COMPILE_OPTIONS -O0)
  endif()
endif()

# The project's libraries are static, except in the sanitizer tree: there each test linking its
# own instrumented copy of the engine and server with debug information came to ~300 MB a test
# binary (20 GB a tree), so they are shared objects there, once on disk and quicker to link.
if(INFERD_SANITIZE)
  set(INFERD_LIBRARY_KIND SHARED)
  set(CMAKE_POSITION_INDEPENDENT_CODE ON)
else()
  set(INFERD_LIBRARY_KIND STATIC)
endif()

# Flags of the translation units that hold one instruction-set path of a kernel. They are
# only called after a CPUID check, so the portable build stays runnable on any x86-64 CPU.
set(INFERD_FLAGS_AVX2 -mavx2 -mfma -mf16c)
# -Wno-maybe-uninitialized: GCC 12's AVX-512 intrinsic headers trip false positives (bug 105593).
set(INFERD_FLAGS_AVX512 -mavx512f -mavx512bw -mavx512vl -mavx512dq -mavx512vnni -mavx512bf16 -mavx2 -mfma -mf16c -Wno-maybe-uninitialized)
set(INFERD_FLAGS_AMX ${INFERD_FLAGS_AVX512} -mamx-tile -mamx-bf16)

# CUDA: AUTO turns the CUDA backend (ggml/cuda/) on when nvcc is found; ON requires it.
set(INFERD_CUDA_ENABLED OFF)
if(INFERD_CUDA STREQUAL "AUTO" OR INFERD_CUDA STREQUAL "ON")
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    set(INFERD_CUDA_ENABLED ON)
  elseif(INFERD_CUDA STREQUAL "ON")
    message(FATAL_ERROR "INFERD_CUDA=ON but no CUDA compiler (nvcc) was found")
  endif()
elseif(NOT INFERD_CUDA STREQUAL "OFF")
  message(FATAL_ERROR "INFERD_CUDA must be AUTO, ON or OFF (got '${INFERD_CUDA}')")
endif()
if(INFERD_CUDA_ENABLED)
  # sm_90 code plus sm_90 PTX (newer GPUs JIT the PTX); CMAKE_CUDA_ARCHITECTURES overrides.
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES 90)
  endif()
  enable_language(CUDA)
  find_package(CUDAToolkit REQUIRED)
endif()
message(STATUS "inferd: build type ${CMAKE_BUILD_TYPE}, native ${INFERD_NATIVE}, sanitize ${INFERD_SANITIZE}, "
               "CUDA toolkit ${INFERD_CUDA_ENABLED} (${CMAKE_CUDA_COMPILER})")
