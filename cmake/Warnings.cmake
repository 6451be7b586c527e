# Compiler flags shared by every scalelab target: scalelab_options carries them.
add_library(scalelab_options INTERFACE)
target_compile_options(scalelab_options INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wno-deprecated-declarations>)
if(SCALELAB_WERROR)
  target_compile_options(scalelab_options INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-Werror>)
endif()
if(SCALELAB_NATIVE)
  # Eigen and the im2col/reduction loops vectorise for the CPU at hand (AVX-512 here).
  target_compile_options(scalelab_options INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-march=native -mprefer-vector-width=512>)
endif()
if(SCALELAB_SANITIZE)
  target_compile_options(scalelab_options INTERFACE
    $<$<COMPILE_LANGUAGE:CXX>:-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined>
    # GCC 12 with ASan instrumentation reports Eigen's AVX-512 transpose (_mm512_undefined_ps in
    # avx512fintrin.h) as "used uninitialized": a false positive inside the system header.
    $<$<COMPILE_LANGUAGE:CXX>:-Wno-uninitialized -Wno-maybe-uninitialized>)
  target_link_options(scalelab_options INTERFACE -fsanitize=address,undefined)
endif()
if(SCALELAB_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "SCALELAB_FUZZ needs clang (libFuzzer): configure with the fuzz preset or CMAKE_CXX_COMPILER=clang++")
  endif()
  # Coverage instrumentation for libFuzzer in every library; the fuzz executables link the
  # fuzzer's main (tests/fuzz/CMakeLists.txt).
  target_compile_options(scalelab_options INTERFACE
    $<$<COMPILE_LANGUAGE:CXX>:-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined>)
  target_link_options(scalelab_options INTERFACE -fsanitize=address,undefined)
endif()
if(SCALELAB_TSAN)
  target_compile_options(scalelab_options INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-fsanitize=thread -fno-omit-frame-pointer>
    # The same GCC 12 false positive in Eigen's AVX-512 header as under ASan (above).
    $<$<COMPILE_LANG_AND_ID:CXX,GNU>:-Wno-uninitialized -Wno-maybe-uninitialized>)
  target_link_options(scalelab_options INTERFACE -fsanitize=thread)
endif()
target_compile_definitions(scalelab_options INTERFACE
  SCALELAB_VERSION="${PROJECT_VERSION}"
  $<$<BOOL:${SCALELAB_HAVE_CUDA}>:SCALELAB_HAVE_CUDA=1>
  $<$<BOOL:${SCALELAB_HAVE_NCCL}>:SCALELAB_HAVE_NCCL=1>
  $<$<BOOL:${SCALELAB_HAVE_HWLOC}>:SCALELAB_HAVE_HWLOC=1>)
