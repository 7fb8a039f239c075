# Driver of the tests in tests/install/CMakeLists.txt:
#   cmake -DMODE=<install|find_package|pkg_config|add_subdirectory> -D... -P run_downstream.cmake
# Each mode starts from an empty directory (PREFIX or BINARY) and fails with a message naming
# the step that went wrong.

function(run step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE result)
  if(NOT result EQUAL 0)
    list(JOIN ARGN " " command)
    message(FATAL_ERROR "${step} failed (${result}): ${command}")
  endif()
endfunction()

function(require_files)
  foreach(file ${ARGN})
    if(NOT EXISTS ${file})
      message(FATAL_ERROR "missing after the install: ${file}")
    endif()
  endforeach()
endfunction()

# Configures, builds and runs the downstream project in BINARY with the extra cmake arguments.
function(build_and_run_downstream)
  file(REMOVE_RECURSE ${BINARY})
  set(config_arg)
  if(CONFIG)
    set(config_arg --config ${CONFIG})
  endif()
  run("configuring the downstream project"
      ${CMAKE_COMMAND} -S ${SOURCE} -B ${BINARY} -G ${GENERATOR}
      -DCMAKE_CXX_COMPILER=${CXX_COMPILER} -DCMAKE_BUILD_TYPE=${CONFIG} ${ARGN})
  if(CHECK_CACHE)
    cmake_language(CALL ${CHECK_CACHE} ${BINARY}/CMakeCache.txt)
  endif()
  set(jobs_arg)
  if(JOBS)
    set(jobs_arg --parallel ${JOBS})
  endif()
  run("building the downstream project" ${CMAKE_COMMAND} --build ${BINARY} ${config_arg} ${jobs_arg})
  set(program ${BINARY}/downstream)
  if(NOT EXISTS ${program})
    set(program ${BINARY}/${CONFIG}/downstream)   # multi-configuration generators
  endif()
  run("running the downstream program" ${program})
endfunction()

if(MODE STREQUAL "install")
  file(REMOVE_RECURSE ${PREFIX})
  set(config_arg)
  if(CONFIG)
    set(config_arg --config ${CONFIG})
  endif()
  run("building the library" ${CMAKE_COMMAND} --build ${BUILD_DIR} --target mabd ${config_arg})
  run("installing the library"
      ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${PREFIX} --component mabd_library
      ${config_arg})
  require_files(${PREFIX}/include/mabd/mabd.h
                ${PREFIX}/${CMAKEDIR}/mabdConfig.cmake
                ${PREFIX}/${CMAKEDIR}/mabdConfigVersion.cmake
                ${PREFIX}/${CMAKEDIR}/mabdTargets.cmake
                ${PREFIX}/${CMAKEDIR}/FindCHOLMOD.cmake
                ${PREFIX}/${LIBDIR}/pkgconfig/mabd.pc)

elseif(MODE STREQUAL "find_package")
  # Only the test prefix is searched for mabd (not the package registries).
  build_and_run_downstream(-DCMAKE_PREFIX_PATH=${PREFIX}
                           -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF)
  file(STRINGS ${BINARY}/CMakeCache.txt mabd_dir REGEX "^mabd_DIR:")
  string(FIND "${mabd_dir}" "=${PREFIX}/" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "mabd was not found in the test prefix ${PREFIX}: ${mabd_dir}")
  endif()

elseif(MODE STREQUAL "add_subdirectory")
  # The library alone needs none of the program's, tests' or benchmarks' dependencies: none
  # of them may have been looked for.
  function(check_cache cache)
    file(STRINGS ${cache} searched REGEX "^(CLI11_DIR|GTest_DIR|benchmark_DIR|MABD_NPM_EXECUTABLE):")
    if(searched)
      message(FATAL_ERROR "add_subdirectory(mabd) looked for what only the program, tests or "
                          "benchmarks need: ${searched}")
    endif()
  endfunction()
  set(CHECK_CACHE check_cache)
  string(TIMESTAMP start "%s")
  build_and_run_downstream(-DMABD_SUBDIR=${MABD_SOURCE})
  string(TIMESTAMP end "%s")
  math(EXPR seconds "${end} - ${start}")
  message(STATUS "add_subdirectory: configured, built and ran in ${seconds} s")

elseif(MODE STREQUAL "pkg_config")
  if(NOT PKG_CONFIG)
    message(FATAL_ERROR "pkg-config was not found")
  endif()
  file(REMOVE_RECURSE ${BINARY})
  file(MAKE_DIRECTORY ${BINARY})
  set(ENV{PKG_CONFIG_PATH} ${PREFIX}/${LIBDIR}/pkgconfig)
  execute_process(COMMAND ${PKG_CONFIG} --cflags --libs --static mabd
                  OUTPUT_VARIABLE flags OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE result)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "pkg-config --cflags --libs --static mabd failed (${result})")
  endif()
  message(STATUS "pkg-config --cflags --libs --static mabd: ${flags}")
  separate_arguments(flags UNIX_COMMAND "${flags}")
  run("compiling and linking with pkg-config's flags"
      ${CXX_COMPILER} -std=c++20 -O2 ${SOURCE}/main.cpp -o ${BINARY}/downstream ${flags})
  # A shared libmabd is found in the prefix.
  set(ENV{LD_LIBRARY_PATH} "${PREFIX}/${LIBDIR}:$ENV{LD_LIBRARY_PATH}")
  run("running the downstream program" ${BINARY}/downstream)

else()
  message(FATAL_ERROR "run_downstream.cmake: unknown MODE '${MODE}'")
endif()
