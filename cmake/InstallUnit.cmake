# Run by `cmake --install` (Install.cmake includes it through install(CODE)): writes the systemd unit with the
# paths of the prefix being installed into, known only now (`cmake --install --prefix P` may change it after
# configuring). Inputs: BISECTD_UNIT_IN, BISECTD_UNIT_TMP (a build dir), BISECTD_UNIT_DIR, BISECTD_BINDIR,
# BISECTD_DATADIR (GNUInstallDirs values, relative to the prefix or absolute).
function(bisectd_full_path out dir)
  if(IS_ABSOLUTE "${dir}")
    set(${out} "${dir}" PARENT_SCOPE)
  else()
    set(${out} "${CMAKE_INSTALL_PREFIX}/${dir}" PARENT_SCOPE)
  endif()
endfunction()

bisectd_full_path(CMAKE_INSTALL_FULL_BINDIR "${BISECTD_BINDIR}")
bisectd_full_path(CMAKE_INSTALL_FULL_DATADIR "${BISECTD_DATADIR}")
bisectd_full_path(unit_dir "${BISECTD_UNIT_DIR}")
configure_file("${BISECTD_UNIT_IN}" "${BISECTD_UNIT_TMP}/bisectd.service" @ONLY)
file(INSTALL DESTINATION "${unit_dir}" TYPE FILE FILES "${BISECTD_UNIT_TMP}/bisectd.service")
