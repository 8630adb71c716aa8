# fnprof ranks and the file names that keep ranks apart (profile/outname.c).
fnp_unit_test(check_outname)

# The table against figures computed in Python from the same profiles: four ranks out of
# order, a rank of two files, positional ranks, a gap, bad input, 30 random runs.
add_test(NAME ranks.table
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/ranks/check_ranks.py
                 $<TARGET_FILE:fnprof> ${CMAKE_CURRENT_BINARY_DIR}/ranks-work)
set_tests_properties(ranks.table PROPERTIES LABELS cli)
