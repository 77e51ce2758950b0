# Which MPI library this build uses, and how tests launch programs with it. The names are the
# meta record's "mpi.flavour" (ml_mpi_flavour in src/core/meta.c).

if(MPI_C_LIBRARY_VERSION_STRING MATCHES "Open MPI v([0-9]+)")
  set(MPILENS_MPI_FLAVOUR openmpi)
  set(MPILENS_OPENMPI_MAJOR ${CMAKE_MATCH_1})
elseif(MPI_C_LIBRARY_VERSION_STRING MATCHES "Intel\\(R\\) MPI")
  set(MPILENS_MPI_FLAVOUR intelmpi)
elseif(MPI_C_LIBRARY_VERSION_STRING MATCHES "MPICH")
  set(MPILENS_MPI_FLAVOUR mpich)
else()
  set(MPILENS_MPI_FLAVOUR unknown)
endif()
# Tests run up to 4 ranks on a 2-core machine. Open MPI then leaves ranks unbound, and whether
# ranks 0 and 1 share a core changes from run to run, and with it what point-to-point benchmarks
# measure; placing ranks round-robin over cores keeps 0 and 1 apart in every run. (MPICH's hydra
# does not need it.) A user's MPIEXEC_PREFLAGS wins.
if(MPILENS_MPI_FLAVOUR STREQUAL "openmpi" AND NOT MPIEXEC_PREFLAGS)
  if(MPILENS_OPENMPI_MAJOR GREATER_EQUAL 5)
    set(MPIEXEC_PREFLAGS --map-by core:oversubscribe --rank-by span --bind-to core:overload-allowed)
  else()
    set(MPIEXEC_PREFLAGS --map-by core:oversubscribe --bind-to core:overload-allowed)
  endif()
endif()
message(STATUS "mpilens: MPI flavour ${MPILENS_MPI_FLAVOUR}, launcher ${MPIEXEC_EXECUTABLE} ${MPIEXEC_PREFLAGS}")
# The library's version (make test-compat's matrix names it).
file(WRITE "${PROJECT_BINARY_DIR}/mpi-library.txt" "${MPI_C_LIBRARY_VERSION_STRING}\n")

# The MPI-5 standard ABI (mpi_abi.h, libmpi_abi.so: MPICH 5's mpicc_abi) defines no Fortran
# integer type: Fortran programs call a Fortran library of their own there, beyond any C-level
# layer. Where mpi.h has no MPI_Fint, the layers have no Fortran entry points (MPILENS_NO_FORTRAN)
# and the monitoring API no Fortran module.
include(CheckCSourceCompiles)
set(CMAKE_REQUIRED_INCLUDES ${MPI_C_INCLUDE_DIRS})
list(TRANSFORM MPI_C_COMPILE_DEFINITIONS PREPEND "-D" OUTPUT_VARIABLE CMAKE_REQUIRED_DEFINITIONS)
check_c_source_compiles("#include <mpi.h>\nint main(void) { MPI_Fint f = 0; return (int)f; }" MPILENS_MPI_HAS_FINT)
unset(CMAKE_REQUIRED_INCLUDES)
unset(CMAKE_REQUIRED_DEFINITIONS)
if(MPILENS_MPI_HAS_FINT)
  set(MPILENS_FORTRAN_ENTRIES ON)
else()
  set(MPILENS_FORTRAN_ENTRIES OFF)
  mpilens_left_out(Fortran "mpi.h has no MPI_Fint (the MPI-5 standard ABI): no Fortran entry points in the layers, no Fortran module")
  add_compile_definitions(MPILENS_NO_FORTRAN=1)
endif()

# Each flavour's test environment (run as root, oversubscription, ...) is one committed file.
set(MPILENS_TEST_ENV "")
set(env_file "${PROJECT_SOURCE_DIR}/tests/mpi/env.${MPILENS_MPI_FLAVOUR}")
if(EXISTS "${env_file}")
  file(STRINGS "${env_file}" lines REGEX "^[A-Za-z_][A-Za-z0-9_]*=")
  set(MPILENS_TEST_ENV ${lines})
endif()

# mpilens_add_mpi_test(NAME name NP n TARGET target [ARGS ...] [ENV VAR=value ...] [TIMEOUT s] [TIMED])
# mpilens_add_mpi_test(NAME name NP n SCRIPT script [ARGS ...] [ENV VAR=value ...] [TIMEOUT s] [TIMED])
# Registers "mpi.<name>.np<n>", labelled mpi;<flavour>, run with the build's test environment
# (plus ENV) and TIMEOUT seconds (120 unless given).
# TARGET: the program, launched at n ranks by the build's MPI launcher, with ARGS.
# SCRIPT: a black-box test script (a path relative to the calling folder) that launches programs
#   itself, run as `script ARGS... LAUNCHER PREFLAGS...` (ARGS usually hold n).
# TIMED: the test's checks depend on time (see mpilens_timed_test).
function(mpilens_add_mpi_test)
  cmake_parse_arguments(T "TIMED" "NAME;TARGET;SCRIPT;NP;TIMEOUT" "ARGS;ENV" ${ARGN})
  if(NOT T_NAME OR NOT T_NP OR (T_TARGET AND T_SCRIPT) OR (NOT T_TARGET AND NOT T_SCRIPT) OR T_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "mpilens_add_mpi_test: NAME, NP and one of TARGET or SCRIPT, got: ${ARGN}")
  endif()
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 120)
  endif()
  set(test_name "mpi.${T_NAME}.np${T_NP}")
  if(T_TARGET)
    set(command ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${T_NP} ${MPIEXEC_PREFLAGS} $<TARGET_FILE:${T_TARGET}>
                ${MPIEXEC_POSTFLAGS} ${T_ARGS})
  else()
    if(NOT IS_ABSOLUTE "${T_SCRIPT}")
      set(T_SCRIPT "${CMAKE_CURRENT_SOURCE_DIR}/${T_SCRIPT}")
    endif()
    set(command ${T_SCRIPT} ${T_ARGS} ${MPIEXEC_EXECUTABLE} ${MPIEXEC_PREFLAGS})
  endif()
  add_test(NAME ${test_name} COMMAND ${command})
  # ctest starts the costliest first: the scripts (a program launched tens of times, up to a minute
  # and more at 4 ranks) before the programs (seconds), the 4-rank ones first, so that no long
  # script starts last and runs on alone at the end of a parallel run.
  if(T_SCRIPT)
    math(EXPR cost "10 * ${T_NP}")
  else()
    set(cost ${T_NP})
  endif()
  set_tests_properties(${test_name} PROPERTIES TIMEOUT ${T_TIMEOUT} LABELS "mpi;${MPILENS_MPI_FLAVOUR}"
                                               ENVIRONMENT "${MPILENS_TEST_ENV};${T_ENV}" COST ${cost})
  if(T_TIMED)
    mpilens_timed_test(${test_name})
  endif()
endfunction()

# make test runs ctest two or three tests at a time (Makefile, ctest_jobs: MPI launches spend much
# of their time waiting). A test whose checks depend on time (a ground truth in milliseconds, a
# clock offset within a round trip, a transfer during a computation) must have the machine to
# itself; and when it shows that the machine was too busy to judge (its own sleeps overslept, its
# ranks lost their cores), it exits 77 with the reason, which ctest reports as skipped rather than
# passed or failed.
function(mpilens_timed_test name)
  set_tests_properties(${name} PROPERTIES RUN_SERIAL TRUE SKIP_RETURN_CODE 77)
endfunction()
