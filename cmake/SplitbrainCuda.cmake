# Decides whether the CUDA backend is built (SPLITBRAIN_CUDA = AUTO|ON|OFF) and, when it is,
# provides imported targets for the two libraries the toolkit's CMake package does not:
#   splitbrain::cudnn and splitbrain::nccl (searched next to the CUDA toolkit).
# Sets SPLITBRAIN_WITH_CUDA to ON or OFF for the rest of the build.

string(TOUPPER "${SPLITBRAIN_CUDA}" _sb_cuda_mode)
if(NOT _sb_cuda_mode MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "SPLITBRAIN_CUDA must be AUTO, ON or OFF (got '${SPLITBRAIN_CUDA}')")
endif()

set(SPLITBRAIN_WITH_CUDA OFF)
if(NOT _sb_cuda_mode STREQUAL "OFF")
  include(CheckLanguage)
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    # 'native' needs a visible GPU; build machines usually have none, so name the targets.
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES "80;90")
    endif()
    enable_language(CUDA)
    find_package(CUDAToolkit REQUIRED)
    get_filename_component(_sb_cuda_root "${CUDAToolkit_BIN_DIR}" DIRECTORY)

    find_path(SPLITBRAIN_CUDNN_INCLUDE_DIR cudnn.h HINTS ${CUDAToolkit_INCLUDE_DIRS} ${_sb_cuda_root}/include)
    find_library(SPLITBRAIN_CUDNN_LIBRARY cudnn HINTS ${CUDAToolkit_LIBRARY_DIR} ${_sb_cuda_root}/lib64)
    find_path(SPLITBRAIN_NCCL_INCLUDE_DIR nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS} ${_sb_cuda_root}/include)
    find_library(SPLITBRAIN_NCCL_LIBRARY nccl HINTS ${CUDAToolkit_LIBRARY_DIR} ${_sb_cuda_root}/lib64)

    if(SPLITBRAIN_CUDNN_INCLUDE_DIR AND SPLITBRAIN_CUDNN_LIBRARY AND
       SPLITBRAIN_NCCL_INCLUDE_DIR AND SPLITBRAIN_NCCL_LIBRARY)
      add_library(splitbrain::cudnn UNKNOWN IMPORTED)
      set_target_properties(splitbrain::cudnn PROPERTIES
        IMPORTED_LOCATION "${SPLITBRAIN_CUDNN_LIBRARY}"
        INTERFACE_INCLUDE_DIRECTORIES "${SPLITBRAIN_CUDNN_INCLUDE_DIR}")
      add_library(splitbrain::nccl UNKNOWN IMPORTED)
      set_target_properties(splitbrain::nccl PROPERTIES
        IMPORTED_LOCATION "${SPLITBRAIN_NCCL_LIBRARY}"
        INTERFACE_INCLUDE_DIRECTORIES "${SPLITBRAIN_NCCL_INCLUDE_DIR}")
      set(SPLITBRAIN_WITH_CUDA ON)
    elseif(_sb_cuda_mode STREQUAL "ON")
      message(FATAL_ERROR "SPLITBRAIN_CUDA=ON but cuDNN or NCCL was not found next to the CUDA "
                          "toolkit (${_sb_cuda_root}); cudnn: ${SPLITBRAIN_CUDNN_LIBRARY}, "
                          "nccl: ${SPLITBRAIN_NCCL_LIBRARY}")
    endif()
  elseif(_sb_cuda_mode STREQUAL "ON")
    message(FATAL_ERROR "SPLITBRAIN_CUDA=ON but no CUDA compiler was found; "
                        "set CMAKE_CUDA_COMPILER or install the CUDA toolkit")
  endif()
endif()
message(STATUS "splitbrain: CUDA backend ${SPLITBRAIN_WITH_CUDA} (SPLITBRAIN_CUDA=${_sb_cuda_mode})")
