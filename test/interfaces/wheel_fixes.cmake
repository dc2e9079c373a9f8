# Included after project() by build.py. The ROS wheels' exported targets name the include directory of the
# Python that built them (/opt/python/...), absent here; CMake refuses to generate with a missing include
# directory, so, once the CMakeLists has been read, the missing directories are dropped from every imported target.
function(_drop_missing_include_directories)
  get_directory_property(targets IMPORTED_TARGETS)
  foreach(target IN LISTS targets)
    get_target_property(directories ${target} INTERFACE_INCLUDE_DIRECTORIES)
    if(directories)
      set(kept "")
      foreach(directory IN LISTS directories)
        if(EXISTS "${directory}" OR directory MATCHES "\\$<")
          list(APPEND kept "${directory}")
        endif()
      endforeach()
      set_target_properties(${target} PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${kept}")
    endif()
  endforeach()
endfunction()
cmake_language(DEFER DIRECTORY ${CMAKE_SOURCE_DIR} CALL _drop_missing_include_directories)
