# Warnings for our own code (INTERFACE library bisectd_warnings); -Werror under BISECTD_DEV_MODE.
option(BISECTD_DEV_MODE "Treat warnings as errors" OFF)
add_library(bisectd_warnings INTERFACE)
target_compile_options(bisectd_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Woverloaded-virtual>
  $<$<BOOL:${BISECTD_DEV_MODE}>:-Werror>)
