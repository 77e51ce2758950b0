# mpilens_add_wrappers(TARGET SPEC): the PMPI wrappers of a layer, generated at build time from
# src/wrap/mpi_calls.txt and the layer's SPEC (src/wrap/generate_wrappers.py says what it writes),
# added to TARGET. The layer's headers that the spec includes are found in its source directory.
find_package(Python3 REQUIRED COMPONENTS Interpreter)
set(MPILENS_WRAP_TABLE "${PROJECT_SOURCE_DIR}/src/wrap/mpi_calls.txt")
set(MPILENS_WRAP_GENERATOR "${PROJECT_SOURCE_DIR}/src/wrap/generate_wrappers.py")

function(mpilens_add_wrappers target spec)
  get_filename_component(layer "${CMAKE_CURRENT_SOURCE_DIR}" NAME)
  set(generated "${CMAKE_CURRENT_BINARY_DIR}/${layer}_wrappers.c")
  add_custom_command(
    OUTPUT "${generated}"
    COMMAND Python3::Interpreter "${MPILENS_WRAP_GENERATOR}" --table "${MPILENS_WRAP_TABLE}"
            --spec "${CMAKE_CURRENT_SOURCE_DIR}/${spec}" --out "${generated}"
    DEPENDS "${MPILENS_WRAP_GENERATOR}" "${MPILENS_WRAP_TABLE}" "${CMAKE_CURRENT_SOURCE_DIR}/${spec}"
    COMMENT "Generating the ${layer} layer's MPI wrappers"
    VERBATIM)
  target_sources(${target} PRIVATE "${generated}")
  target_include_directories(${target} PRIVATE "${CMAKE_CURRENT_SOURCE_DIR}")
endfunction()
