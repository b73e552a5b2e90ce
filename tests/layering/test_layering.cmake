# The layering check rejects planted forbidden includes and accepts the real tree.
# Run as: cmake -DSOURCE_DIR=<project> -DWORK_DIR=<scratch dir> -P test_layering.cmake
cmake_minimum_required(VERSION 3.25)

set(tree "${WORK_DIR}/layering-tree")
file(REMOVE_RECURSE "${tree}")
file(MAKE_DIRECTORY "${tree}/cmake" "${tree}/bisect" "${tree}/cli" "${tree}/daemon/watch" "${tree}/stray")
file(COPY "${SOURCE_DIR}/cmake/Layers.cmake" "${SOURCE_DIR}/cmake/CheckLayering.cmake" DESTINATION "${tree}/cmake")
file(WRITE "${tree}/bisect/planted.cpp" "#include \"bisect/engine.hpp\"\n#include <sqlite3.h>\n#include <unistd.h>\n")
file(WRITE "${tree}/cli/planted.cpp" "#include \"storage/store.hpp\"\n")
file(WRITE "${tree}/daemon/watch/planted.cpp" "#include \"daemon/api/api.hpp\"\n#include <yaml-cpp/yaml.h>\n")
file(WRITE "${tree}/stray/planted.cpp" "\n")

function(run_check dir out_rc out_text)
  execute_process(COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${dir} -P ${dir}/cmake/CheckLayering.cmake
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  set(${out_rc} ${rc} PARENT_SCOPE)
  set(${out_text} "${out}${err}" PARENT_SCOPE)
endfunction()

run_check("${tree}" rc text)
if(rc EQUAL 0)
  message(FATAL_ERROR "planted violations were accepted:\n${text}")
endif()
foreach(expected
    "bisect/planted.cpp: #include <sqlite3.h>: sqlite headers are not allowed for bisect"
    "bisect/planted.cpp: #include <unistd.h>: system headers beyond the C++ standard library"
    "cli/planted.cpp: #include \"storage/store.hpp\": not allowed for cli"
    "daemon/watch/planted.cpp: #include \"daemon/api/api.hpp\": not allowed for daemon/watch"
    "daemon/watch/planted.cpp: #include <yaml-cpp/yaml.h>: yaml headers are not allowed for daemon/watch"
    "stray/planted.cpp: in no layer")
  string(FIND "${text}" "${expected}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "missing from the check's output: ${expected}\n--- output:\n${text}")
  endif()
endforeach()
string(FIND "${text}" "bisect/engine.hpp" allowed)
if(NOT allowed EQUAL -1)
  message(FATAL_ERROR "an allowed include was reported:\n${text}")
endif()

run_check("${SOURCE_DIR}" rc text)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the real tree fails the layering check:\n${text}")
endif()
file(REMOVE_RECURSE "${tree}")
message(STATUS "layering: planted violations rejected, the real tree accepted")
