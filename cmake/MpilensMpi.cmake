# Which MPI library this build uses, and how tests launch programs with it.

if(MPI_C_LIBRARY_VERSION_STRING MATCHES "Open MPI")
  set(MPILENS_MPI_FLAVOUR openmpi)
elseif(MPI_C_LIBRARY_VERSION_STRING MATCHES "MPICH")
  set(MPILENS_MPI_FLAVOUR mpich)
else()
  set(MPILENS_MPI_FLAVOUR unknown)
endif()
message(STATUS "mpilens: MPI flavour ${MPILENS_MPI_FLAVOUR}, launcher ${MPIEXEC_EXECUTABLE}")

# Each flavour's test environment (run as root, oversubscription, ...) is one committed file.
set(MPILENS_TEST_ENV "")
set(env_file "${PROJECT_SOURCE_DIR}/tests/mpi/env.${MPILENS_MPI_FLAVOUR}")
if(EXISTS "${env_file}")
  file(STRINGS "${env_file}" lines REGEX "^[A-Za-z_][A-Za-z0-9_]*=")
  set(MPILENS_TEST_ENV ${lines})
endif()

# mpilens_add_mpi_test(NAME name TARGET target NP n [ARGS ...] [TIMEOUT s])
# Registers "mpi.<name>.np<n>", run with the build's MPI launcher and test environment.
function(mpilens_add_mpi_test)
  cmake_parse_arguments(T "" "NAME;TARGET;NP;TIMEOUT" "ARGS" ${ARGN})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 120)
  endif()
  set(test_name "mpi.${T_NAME}.np${T_NP}")
  add_test(NAME ${test_name}
           COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${T_NP} ${MPIEXEC_PREFLAGS}
                   $<TARGET_FILE:${T_TARGET}> ${MPIEXEC_POSTFLAGS} ${T_ARGS})
  set_tests_properties(${test_name} PROPERTIES TIMEOUT ${T_TIMEOUT} LABELS "mpi;${MPILENS_MPI_FLAVOUR}"
                                               ENVIRONMENT "${MPILENS_TEST_ENV}")
endfunction()
