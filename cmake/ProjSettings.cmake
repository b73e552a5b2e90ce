# Language level and build-type settings shared by every target (INTERFACE library bisectd_settings).
set(CMAKE_CXX_STANDARD 23)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
set(CMAKE_CXX_EXTENSIONS OFF)
set(CMAKE_POSITION_INDEPENDENT_CODE ON)
if(NOT CMAKE_BUILD_TYPE AND NOT CMAKE_CONFIGURATION_TYPES)
  set(CMAKE_BUILD_TYPE RelWithDebInfo CACHE STRING "Build type" FORCE)
endif()

option(BISECTD_ENABLE_SANITIZER_ADDRESS "Build with AddressSanitizer" OFF)
option(BISECTD_ENABLE_SANITIZER_UNDEFINED "Build with UndefinedBehaviorSanitizer" OFF)
option(BISECTD_ENABLE_SANITIZER_THREAD "Build with ThreadSanitizer (not with the address sanitizer)" OFF)
if(BISECTD_ENABLE_SANITIZER_THREAD AND BISECTD_ENABLE_SANITIZER_ADDRESS)
  message(FATAL_ERROR "ThreadSanitizer and AddressSanitizer cannot be combined")
endif()

# libFuzzer targets (tests/fuzz, scripts/fuzz): every library is instrumented for coverage (fuzzer-no-link) with
# AddressSanitizer and UndefinedBehaviorSanitizer; only the fuzz executables link libFuzzer's main.
option(BISECTD_FUZZ "Build the libFuzzer targets (clang only)" OFF)
if(BISECTD_FUZZ AND (NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang" OR CMAKE_CXX_COMPILER_VERSION VERSION_LESS 16))
  message(FATAL_ERROR "BISECTD_FUZZ needs clang >= 16 (libFuzzer, and std::expected of libstdc++ 12), not "
                      "${CMAKE_CXX_COMPILER_ID} ${CMAKE_CXX_COMPILER_VERSION}: configure with "
                      "-DCMAKE_CXX_COMPILER=clang++-16 -DCMAKE_C_COMPILER=clang-16 (scripts/fuzz does)")
endif()

add_library(bisectd_settings INTERFACE)
target_compile_features(bisectd_settings INTERFACE cxx_std_23)
target_include_directories(bisectd_settings INTERFACE ${PROJECT_SOURCE_DIR})
target_compile_definitions(bisectd_settings INTERFACE
  $<$<CONFIG:Debug>:_GLIBCXX_ASSERTIONS>
  BISECTD_VERSION="${PROJECT_VERSION}")
# Only the programs and tests that find files of the source tree see its path: libraries compiled in two
# checkouts stay byte-identical, so a shared compiler cache serves both.
add_library(bisectd_source_dir INTERFACE)
target_compile_definitions(bisectd_source_dir INTERFACE BISECTD_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
if(BISECTD_ENABLE_SANITIZER_ADDRESS)
  target_compile_options(bisectd_settings INTERFACE -fsanitize=address -fno-omit-frame-pointer)
  target_link_options(bisectd_settings INTERFACE -fsanitize=address)
endif()
if(BISECTD_ENABLE_SANITIZER_THREAD)
  target_compile_options(bisectd_settings INTERFACE -fsanitize=thread -fno-omit-frame-pointer)
  target_link_options(bisectd_settings INTERFACE -fsanitize=thread)
endif()
if(BISECTD_ENABLE_SANITIZER_UNDEFINED)
  target_compile_options(bisectd_settings INTERFACE -fsanitize=undefined -fno-sanitize-recover=undefined)
  target_link_options(bisectd_settings INTERFACE -fsanitize=undefined)
endif()
if(BISECTD_FUZZ)
  # libstdc++ 12 offers <expected> only when __cpp_concepts >= 202002; clang 16 implements what it needs
  # (conditionally trivial special members) but still announces 201907.
  target_compile_options(bisectd_settings INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-U__cpp_concepts
                         -D__cpp_concepts=202002L>)
  target_compile_options(bisectd_settings INTERFACE -fsanitize=fuzzer-no-link,address,undefined
                         -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
  target_link_options(bisectd_settings INTERFACE -fsanitize=address,undefined)
endif()
