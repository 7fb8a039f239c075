# The dependencies of the mabd library, declared once each.
#
#   mabd_dependency(<PUBLIC|PRIVATE> <package> [<find_package arguments>...]
#                   TARGETS <imported targets>...
#                   [PC_REQUIRES <pkg-config modules>...] [PC_LIBS <linker flags>...])
#       find_package(<package> <arguments> REQUIRED) and links the library to TARGETS.
#
#   mabd_pkg_config_dependency(<PUBLIC|PRIVATE> <prefix> <pkg-config module>)
#       pkg_check_modules(<prefix> REQUIRED IMPORTED_TARGET <module>) and links the library to
#       PkgConfig::<prefix>.
#
# Each declaration is also recorded for the installed package files, so that a user of the
# installed library finds the same dependencies again:
#   - mabdDependencies.cmake (included by mabdConfig.cmake): find_dependency(<package>
#     <arguments>), or find_dependency(PkgConfig) and pkg_check_modules(<prefix> ...). PRIVATE
#     dependencies are only written for a static library, whose users link them too;
#   - mabd.pc: PC_REQUIRES (pkg-config modules; the module itself for
#     mabd_pkg_config_dependency) go to Requires or Requires.private, PC_LIBS to Libs or
#     Libs.private, for PUBLIC and PRIVATE dependencies respectively.
#
# The lines are kept in global properties and written by mabd_write_package_files()
# (cmake/MabdInstall.cmake) once every dependency is declared.

function(_mabd_record_dependency scope config_lines pc_requires pc_libs)
  if(NOT scope MATCHES "^(PUBLIC|PRIVATE)$")
    message(FATAL_ERROR "mabd dependency: the scope must be PUBLIC or PRIVATE, not '${scope}'")
  endif()
  set_property(GLOBAL APPEND_STRING PROPERTY MABD_CONFIG_DEPENDENCIES_${scope} "${config_lines}")
  set_property(GLOBAL APPEND PROPERTY MABD_PC_REQUIRES_${scope} ${pc_requires})
  set_property(GLOBAL APPEND PROPERTY MABD_PC_LIBS_${scope} ${pc_libs})
endfunction()

# Macros, not functions: the variables that find_package and pkg_check_modules set (<prefix>_FOUND,
# <prefix>_INCLUDE_DIRS, ...) stay visible to the rest of the project, as with a plain call.
macro(mabd_dependency scope package)
  cmake_parse_arguments(_mabd_dep "" "" "TARGETS;PC_REQUIRES;PC_LIBS" ${ARGN})
  if(NOT _mabd_dep_TARGETS)
    message(FATAL_ERROR "mabd_dependency(${package}): TARGETS is required")
  endif()
  # The remaining arguments (version, NO_MODULE, COMPONENTS...) are passed to find_package.
  find_package(${package} ${_mabd_dep_UNPARSED_ARGUMENTS} REQUIRED)
  target_link_libraries(mabd ${scope} ${_mabd_dep_TARGETS})
  list(JOIN _mabd_dep_UNPARSED_ARGUMENTS " " _mabd_dep_args)
  string(STRIP "find_dependency(${package} ${_mabd_dep_args}" _mabd_dep_line)
  _mabd_record_dependency(${scope} "${_mabd_dep_line})\n" "${_mabd_dep_PC_REQUIRES}"
                          "${_mabd_dep_PC_LIBS}")
endmacro()

macro(mabd_pkg_config_dependency scope prefix module)
  find_package(PkgConfig REQUIRED)
  pkg_check_modules(${prefix} REQUIRED IMPORTED_TARGET ${module})
  target_link_libraries(mabd ${scope} PkgConfig::${prefix})
  string(CONCAT _mabd_dep_line
    "find_dependency(PkgConfig)\n"
    "pkg_check_modules(${prefix} QUIET IMPORTED_TARGET ${module})\n"
    "if(NOT ${prefix}_FOUND)\n"
    "  set(mabd_NOT_FOUND_MESSAGE \"mabd could not be found because dependency ${module} "
    "(pkg-config) could not be found.\")\n"
    "  set(mabd_FOUND FALSE)\n"
    "  return()\n"
    "endif()\n")
  _mabd_record_dependency(${scope} "${_mabd_dep_line}" "${module}" "")
endmacro()
