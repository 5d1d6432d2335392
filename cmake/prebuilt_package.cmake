# pip wheel . -Ccmake.define.XWARP_PREBUILT_ENGINE=BUILD_TREE: the package around an engine this
# checkout already built (tests/python/test_pip.py checks the package, its install and its
# behaviour on every stop without compiling the engine a second time; the nightly builds the
# wheels from source, scripts/wheels.sh). Nothing is compiled: the tree's warp-probe, its engine
# library and its byte-compiled shim are installed where the package puts its own.
set(prebuilt ${XWARP_PREBUILT_ENGINE})
foreach(needed warp-probe libxwarp_engine.so share/xwarp/shim/sitecustomize.py share/xwarp/report.schema.json)
    if(NOT EXISTS ${prebuilt}/${needed})
        message(FATAL_ERROR "xwarp: XWARP_PREBUILT_ENGINE=${prebuilt} has no ${needed}: build that tree first "
                            "(cmake --build ${prebuilt})")
    endif()
endforeach()
install(PROGRAMS ${prebuilt}/warp-probe DESTINATION ${XWARP_BIN_DEST})
install(FILES ${prebuilt}/libxwarp_engine.so DESTINATION xwarp)
set(XWARP_SHIM_BUILD_DIR ${prebuilt}/share/xwarp/shim)
set(XWARP_SCHEMA_BUILT ${prebuilt}/share/xwarp/report.schema.json)
include(${CMAKE_CURRENT_SOURCE_DIR}/cmake/package_data.cmake)
