# The manual against the program and the tree (tests/docs/check_docs.py, one case per test):
# each command's options as --help prints them at test time, in its page (docs/cli/) and in
# fnprof(1) or fnprof-cc(1); the command list; every referred document present; the man
# pages' roff; the licence tags and scripts/spdx. Included from tests/CMakeLists.txt.
set(fnp_docs_py ${CMAKE_CURRENT_SOURCE_DIR}/docs/check_docs.py)

function(fnp_docs_test name)
    add_test(NAME docs.${name}
             COMMAND Python3::Interpreter -B ${fnp_docs_py} ${ARGN}
                     --fnprof $<TARGET_FILE:fnprof> --cc $<TARGET_FILE:fnprof_wrapper_cc>)
    set_tests_properties(docs.${name} PROPERTIES LABELS unit SKIP_RETURN_CODE 77)
endfunction()

foreach(fnp_cmd report run convert merge symbolize diff doctor suggest-filter ranks record)
    fnp_docs_test(options.${fnp_cmd} options ${fnp_cmd})
endforeach()
fnp_docs_test(options.global options fnprof)
fnp_docs_test(options.fnprof_cc options fnprof-cc)
fnp_docs_test(commands commands)
fnp_docs_test(links links)
fnp_docs_test(man man)
fnp_docs_test(spdx spdx)
fnp_docs_test(spdx_script spdx-script)
fnp_docs_test(snakeviz snakeviz)
# SPDX-License-Identifier: MIT
