# fnprof_instrument(<target> [STATIC])
#
# Builds <target>'s own sources with -g -finstrument-functions and links the fnprof runtime
# (libfnprof.so; STATIC: libfnprof.a). Run the program with PROF_OUTPUT=out.prof to get a
# pstats file. With gcc, functions defined in system headers (/usr/include: the C++
# standard library's templates above all) are not instrumented: they would swamp the
# profile and cost a hook pair each (clang 14 has no such filter). Inlined functions
# are still counted: the compilers call the hooks for them with their own address.
function(fnprof_instrument target)
    cmake_parse_arguments(PARSE_ARGV 1 FNP "STATIC" "" "")
    target_compile_options(${target} PRIVATE
        -g -finstrument-functions
        $<$<COMPILE_LANG_AND_ID:C,GNU>:-finstrument-functions-exclude-file-list=/usr/include>
        $<$<COMPILE_LANG_AND_ID:CXX,GNU>:-finstrument-functions-exclude-file-list=/usr/include>)
    if(FNP_STATIC)
        target_link_libraries(${target} PRIVATE fnprof::fnprof_static)
    else()
        target_link_libraries(${target} PRIVATE fnprof::fnprof)
    endif()
endfunction()
