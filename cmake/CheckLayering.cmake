# Fails the build when a folder #includes a header its layer may not use (docs/ARCHITECTURE.md).
# Each rule: folder, then a regex of forbidden include targets.
set(rules
  "bisect|git2|sqlite3|boost/|asio|spawn\\.h|unistd\\.h|sys/wait|curl/|yaml-cpp|spdlog|base/process|base/fs|storage/|vcs/|kbuild/|lab/|report/|daemon/|cli/"
  "base|git2|sqlite3|boost/|curl/|yaml-cpp|storage/|vcs/|kbuild/|lab/|report/|daemon/|cli/|bisect/"
  "storage|git2|boost/|curl/|yaml-cpp|vcs/|kbuild/|lab/|report/|daemon/|cli/"
  "vcs|sqlite3|boost/|curl/|yaml-cpp|storage/|kbuild/|lab/|report/|daemon/|cli/"
  "kbuild|git2|sqlite3|boost/|curl/|yaml-cpp|storage/|vcs/|lab/|report/|daemon/|cli/"
  "lab|git2|sqlite3|boost/|curl/|yaml-cpp|storage/|vcs/|report/|daemon/|cli/"
  "report|git2|sqlite3|boost/|curl/|yaml-cpp|storage/|vcs/|kbuild/|lab/|daemon/|cli/"
  "cli|sqlite3|boost/|yaml-cpp|storage/|daemon/|kbuild/|lab/")
set(failed "")
foreach(rule IN LISTS rules)
  string(REPLACE "|" ";" parts "${rule}")
  list(POP_FRONT parts dir)
  list(JOIN parts "|" forbidden)
  file(GLOB_RECURSE files "${SOURCE_DIR}/${dir}/*.cpp" "${SOURCE_DIR}/${dir}/*.hpp")
  foreach(f IN LISTS files)
    file(STRINGS "${f}" includes REGEX "^[ \t]*#[ \t]*include")
    foreach(line IN LISTS includes)
      if(line MATCHES "[<\"](${forbidden})")
        file(RELATIVE_PATH rel "${SOURCE_DIR}" "${f}")
        string(APPEND failed "  ${rel}: ${line}\n")
      endif()
    endforeach()
  endforeach()
endforeach()
if(failed)
  message(FATAL_ERROR "layering violation (see docs/ARCHITECTURE.md):\n${failed}")
endif()
