# Builds the xwarp_layer_violation target, which includes the runner from the analysis layer,
# and passes only when the build fails because that header cannot be found (a layer's include
# root holds just the layers it links). A build that succeeds, or fails for another reason,
# fails this check.
execute_process(COMMAND ${CMAKE_COMMAND} --build ${BUILD_DIR} --target xwarp_layer_violation
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(all "${out}${err}")
if(rc EQUAL 0)
    message(FATAL_ERROR "the analysis layer compiled an include of the runner: layering is not enforced")
endif()
if(NOT all MATCHES "xwarp/engine/runner/runner.hpp: No such file")
    message(FATAL_ERROR "the violation target failed for another reason:\n${all}")
endif()
if(NOT all MATCHES "xwarp/analysis/summarize.hpp" AND all MATCHES "summarize.hpp: No such file")
    message(FATAL_ERROR "the analysis layer's own headers were not found either:\n${all}")
endif()
message(STATUS "wrong-way include refused: ${BUILD_DIR}")
