# Man pages and shell completion generated from the programs' own --help (docs/man/generate.py), the systemd
# unit, and what `cmake --install` puts where (GNUInstallDirs; an installed bisectd finds its configs and
# bench-core relative to its own path, see daemon/install_paths.hpp).
find_package(Python3 REQUIRED COMPONENTS Interpreter)

set(BISECTD_SYSTEMD_UNIT_DIR "lib/systemd/system" CACHE STRING "where the systemd unit is installed (relative: to the prefix)")
set(BISECTD_SYSUSERS_DIR "lib/sysusers.d" CACHE STRING "where the sysusers.d file (the bisectd user) is installed")
set(BISECTD_BASH_COMPLETION_DIR "${CMAKE_INSTALL_DATADIR}/bash-completion/completions" CACHE STRING
    "where the bash completion is installed")
set(BISECTD_ZSH_COMPLETION_DIR "${CMAKE_INSTALL_DATADIR}/zsh/site-functions" CACHE STRING
    "where the zsh completion is installed")

# bisectd_cli_docs(PROGRAM): BUILD/share/man/man1/PROGRAM.1 and the completion scripts, remade when the program
# or its prose changes.
set(bisectd_generated_docs)
function(bisectd_cli_docs program)
  set(out ${CMAKE_BINARY_DIR}/share)
  set(outputs ${out}/man/man1/${program}.1 ${out}/bash-completion/completions/${program}
              ${out}/zsh/site-functions/_${program})
  add_custom_command(OUTPUT ${outputs}
    COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/docs/man/generate.py $<TARGET_FILE:${program}>
            ${PROJECT_SOURCE_DIR}/docs/man/${program}.txt ${PROJECT_VERSION}
            --man ${out}/man/man1/${program}.1 --bash ${out}/bash-completion/completions/${program}
            --zsh ${out}/zsh/site-functions/_${program}
    DEPENDS ${program} ${PROJECT_SOURCE_DIR}/docs/man/generate.py ${PROJECT_SOURCE_DIR}/docs/man/${program}.txt
    COMMENT "Generating the man page and completion of ${program}"
    VERBATIM)
  set(bisectd_generated_docs ${bisectd_generated_docs} ${outputs} PARENT_SCOPE)
endfunction()
bisectd_cli_docs(bisectd)
bisectd_cli_docs(bisectctl)
add_custom_target(cli_docs ALL DEPENDS ${bisectd_generated_docs})

install(TARGETS bisectd bisectctl RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS bench_core_syscall bench_core_page_fault bench_core_pipe bench_core_mmap
        RUNTIME DESTINATION ${CMAKE_INSTALL_LIBEXECDIR}/bisectd/bench-core)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/configs/ DESTINATION ${CMAKE_INSTALL_DATADIR}/bisectd/configs)
install(FILES ${PROJECT_SOURCE_DIR}/README.md ${PROJECT_SOURCE_DIR}/LICENSE DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs FILES_MATCHING PATTERN "*.md")
install(FILES ${CMAKE_BINARY_DIR}/share/man/man1/bisectd.1 ${CMAKE_BINARY_DIR}/share/man/man1/bisectctl.1
        DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES ${CMAKE_BINARY_DIR}/share/bash-completion/completions/bisectd
              ${CMAKE_BINARY_DIR}/share/bash-completion/completions/bisectctl
        DESTINATION ${BISECTD_BASH_COMPLETION_DIR})
install(FILES ${CMAKE_BINARY_DIR}/share/zsh/site-functions/_bisectd
              ${CMAKE_BINARY_DIR}/share/zsh/site-functions/_bisectctl
        DESTINATION ${BISECTD_ZSH_COMPLETION_DIR})
# The unit names the installed bisectd: written at install time, when the prefix is final.
install(CODE "set(BISECTD_UNIT_IN [[${PROJECT_SOURCE_DIR}/packaging/bisectd.service.in]])
  set(BISECTD_UNIT_TMP [[${CMAKE_BINARY_DIR}/share/systemd]])
  set(BISECTD_UNIT_DIR [[${BISECTD_SYSTEMD_UNIT_DIR}]])
  set(BISECTD_BINDIR [[${CMAKE_INSTALL_BINDIR}]])
  set(BISECTD_DATADIR [[${CMAKE_INSTALL_DATADIR}]])
  include([[${PROJECT_SOURCE_DIR}/cmake/InstallUnit.cmake]])")
install(FILES ${PROJECT_SOURCE_DIR}/packaging/bisectd.sysusers DESTINATION ${BISECTD_SYSUSERS_DIR}
        RENAME bisectd.conf)
