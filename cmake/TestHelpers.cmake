# scalelab_add_unit_test(NAME SOURCES... LIBS ...): a GoogleTest executable whose tests CTest
#   discovers one by one (label "unit").
# scalelab_add_mpi_test(NAME SOURCES... LIBS ... RANKS 2 3 ...): a GoogleTest executable run
#   under mpiexec once per rank count (label "mpi"); the binary calls MPI_Init itself.
set(SCALELAB_MPIEXEC_FLAGS --allow-run-as-root --oversubscribe --bind-to none CACHE STRING "Flags CTest passes to mpiexec")

function(scalelab_add_unit_test name)
  cmake_parse_arguments(T "" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE ${T_LIBS} GTest::gtest GTest::gtest_main scalelab_options)
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/tests/support)
  gtest_discover_tests(${name} PROPERTIES LABELS unit DISCOVERY_TIMEOUT 60)
  add_dependencies(scalelab_unit_tests_all ${name})
endfunction()

function(scalelab_add_mpi_test name)
  cmake_parse_arguments(T "" "" "SOURCES;LIBS;RANKS" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE ${T_LIBS} GTest::gtest MPI::MPI_CXX scalelab_options)
  if(NOT T_RANKS)
    set(T_RANKS 2 3)
  endif()
  foreach(n ${T_RANKS})
    add_test(NAME ${name}_np${n}
             COMMAND ${MPIEXEC_EXECUTABLE} ${SCALELAB_MPIEXEC_FLAGS} ${MPIEXEC_NUMPROC_FLAG} ${n}
                     $<TARGET_FILE:${name}>)
    set_tests_properties(${name}_np${n} PROPERTIES LABELS mpi TIMEOUT 300 PROCESSORS ${n})
  endforeach()
endfunction()
