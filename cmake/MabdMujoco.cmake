# MuJoCo (Debian's libmujoco-dev), optional: used by the peer comparison benchmark and the
# MJCF cross-check test where present. The header and library directly: Debian's
# mujocoConfig.cmake names include directories of packages that libmujoco-dev does not depend
# on (libqhull_r), which fails the generate step.
find_path(MUJOCO_INCLUDE_DIR mujoco/mujoco.h)
find_library(MUJOCO_LIBRARY mujoco)

# Links `target` with MuJoCo and defines MABD_HAVE_MUJOCO when MuJoCo was found.
function(mabd_use_mujoco target)
  if(MUJOCO_INCLUDE_DIR AND MUJOCO_LIBRARY)
    target_include_directories(${target} SYSTEM PRIVATE ${MUJOCO_INCLUDE_DIR})
    target_link_libraries(${target} PRIVATE ${MUJOCO_LIBRARY})
    target_compile_definitions(${target} PRIVATE MABD_HAVE_MUJOCO)
  endif()
endfunction()
