# fnprof ranks and the file names that keep ranks apart (profile/outname.c).
fnp_unit_test(check_outname)

# The table against figures computed in Python from the same profiles: four ranks out of
# order, a rank of two files, positional ranks, a gap, bad input, 30 random runs.
add_test(NAME ranks.table
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/ranks/check_ranks.py
                 $<TARGET_FILE:fnprof> ${CMAKE_CURRENT_BINARY_DIR}/ranks-work)
set_tests_properties(ranks.table PROPERTIES LABELS cli)

# The names of a launcher's ranks' files and of forked children (runtime/env.c's owner
# rule): ranks below a profiled launcher, a launcher that is itself a task of srun, a
# batch shell, "%%p" and "%p".
add_test(NAME e2e.ranks.launcher_names
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/ranks/check_launch.py
                 ${CMAKE_C_COMPILER} $<TARGET_FILE:fnprof_shared>
                 ${CMAKE_CURRENT_BINARY_DIR}/ranks-launch)
set_tests_properties(e2e.ranks.launcher_names PROPERTIES LABELS e2e)

# fnprof merge of ranks' files: "ranks: 0-3" in place of the first file's "rank", lists of
# merges joined, one rank's files kept as that rank; fnprof ranks and report read the sum.
add_test(NAME ranks.merge_names_its_ranks
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/ranks/check_merge_ranks.py
                 $<TARGET_FILE:fnprof> ${CMAKE_CURRENT_BINARY_DIR}/ranks-merge)
set_tests_properties(ranks.merge_names_its_ranks PROPERTIES LABELS cli)
# SPDX-License-Identifier: MIT
