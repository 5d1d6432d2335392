# What every install carries besides the programs: the shim (byte-compiled, from
# XWARP_SHIM_BUILD_DIR), the contracts, the lessons' exercises, the fixer and the guide.
# XWARP_SCHEMA_BUILT is the report schema with its lever enum filled in (CMakeLists.txt).
install(DIRECTORY ${XWARP_SHIM_BUILD_DIR}/
        DESTINATION ${XWARP_DATA_DEST}/xwarp/shim
        PATTERN .compiled EXCLUDE)
# The schema sits in share/xwarp itself: pip uninstall removes a folder only when it listed a
# file directly in it, and would leave share/xwarp behind empty otherwise.
install(FILES ${XWARP_SCHEMA_BUILT} contracts/shim_records.schema.json contracts/shim_inputs.schema.json
              contracts/fixer_protocol.schema.json contracts/warmup_targets.schema.json contracts/recorded_run.schema.json
              notebooks/exercises.json
        DESTINATION ${XWARP_DATA_DEST}/xwarp)
install(FILES runtime/fixer/xwarp_fix.py DESTINATION ${XWARP_DATA_DEST}/xwarp/fixer)
install(FILES references/mechanisms.md references/measurement.md
        DESTINATION ${XWARP_DATA_DEST}/xwarp/references)
