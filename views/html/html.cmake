# SPDX-License-Identifier: MIT
# The HTML report's style and script are ordinary files in this folder, embedded in
# views/html.c at build time as html_assets.h (embed.cmake). Included from
# views/CMakeLists.txt, after fnp_views is defined.
set(fnp_html_dir ${CMAKE_CURRENT_LIST_DIR})
add_custom_command(OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/html_assets.h
                   COMMAND ${CMAKE_COMMAND} -DOUT=${CMAKE_CURRENT_BINARY_DIR}/html_assets.h
                           -DCSS=${fnp_html_dir}/report.css -DJS=${fnp_html_dir}/report.js
                           -P ${fnp_html_dir}/embed.cmake
                   DEPENDS ${fnp_html_dir}/report.css ${fnp_html_dir}/report.js
                           ${fnp_html_dir}/embed.cmake
                   COMMENT "Embedding the HTML report's style and script" VERBATIM)
target_sources(fnp_views PRIVATE ${CMAKE_CURRENT_BINARY_DIR}/html_assets.h)
target_include_directories(fnp_views PRIVATE ${CMAKE_CURRENT_BINARY_DIR})
