# mpilens_add_library: one of the project's public shared libraries, made the same way for each.
#
#   mpilens_add_library(NAME mpilens-foo SOURCES a.c b.c
#                       [SPEC wrapped.spec]      PMPI wrappers generated from the spec (a layer)
#                       [LTO]                    inline across the library's files (a layer's hot path)
#                       [LINK libs...]           private link dependencies
#                       [HEADERS files...])      public headers installed beside it
#
# Every library gets: the public include directory (include/, and its own folder privately),
# MPI::MPI_C as a public dependency, the symbols its exports.map names and no others, the
# project's VERSION and SOVERSION, installation into the `mpilens` export set (as mpilens::foo), and the
# pkg-config file made from cmake/<NAME>.pc.in.
include(CheckCCompilerFlag)
# x86-64 GCC expands a fixed-size memset of a few hundred bytes (a request record cleared for
# each message) inline as `rep stos`, whose start-up costs 15 ns on this project's test machine
# where vector stores clear the same 240 bytes in 4 ns; a layer's hot path asks for a vector loop
# instead, calling the C library above 1 KiB.
set(MPILENS_STRING_STRATEGY -mmemset-strategy=vector_loop:1024:noalign,libcall:-1:noalign)
check_c_compiler_flag("${MPILENS_STRING_STRATEGY}" MPILENS_HAS_STRING_STRATEGY)

function(mpilens_add_library)
  cmake_parse_arguments(L "LTO" "NAME;SPEC" "SOURCES;LINK;HEADERS" ${ARGN})
  add_library(${L_NAME} SHARED ${L_SOURCES})
  if(L_SPEC)
    mpilens_add_wrappers(${L_NAME} ${L_SPEC})
  endif()
  target_include_directories(${L_NAME}
    PUBLIC $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include> $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>
    PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
  if(L_LTO)
    # Calls between the library's own functions may be direct and inlined, across its files too
    # (nothing outside may replace them: exports.map keeps them inside); on a 1-byte message
    # every call shows (bench/layer_instructions).
    target_compile_options(${L_NAME} PRIVATE -fno-semantic-interposition)
    set_property(TARGET ${L_NAME} PROPERTY INTERPROCEDURAL_OPTIMIZATION ${MPILENS_LTO})
    if(MPILENS_HAS_STRING_STRATEGY) # at link time too: code is generated there under LTO
      target_compile_options(${L_NAME} PRIVATE ${MPILENS_STRING_STRATEGY})
      target_link_options(${L_NAME} PRIVATE ${MPILENS_STRING_STRATEGY})
    endif()
  endif()
  target_link_libraries(${L_NAME} PUBLIC MPI::MPI_C PRIVATE ${L_LINK} ${CMAKE_DL_LIBS})
  set(exports ${CMAKE_CURRENT_SOURCE_DIR}/exports.map)
  target_link_options(${L_NAME} PRIVATE "-Wl,--version-script=${exports}")
  set_target_properties(${L_NAME} PROPERTIES
    VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR} LINK_DEPENDS ${exports})
  # exported as mpilens::<name without its prefix> (mpilens::monitor)
  string(REGEX REPLACE "^mpilens-" "" export_name ${L_NAME})
  set_target_properties(${L_NAME} PROPERTIES EXPORT_NAME ${export_name})
  install(TARGETS ${L_NAME} EXPORT mpilens LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
  if(L_HEADERS)
    install(FILES ${L_HEADERS} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  endif()
  configure_file(${PROJECT_SOURCE_DIR}/cmake/${L_NAME}.pc.in ${PROJECT_BINARY_DIR}/${L_NAME}.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/${L_NAME}.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endfunction()
