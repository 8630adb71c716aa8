# SPDX-License-Identifier: MIT
# Turns the HTML report's style and script into a C header (cmake -P, run by the build):
#   cmake -DOUT=html_assets.h -DCSS=report.css -DJS=report.js -P embed.cmake
# Each file becomes a NUL-terminated char array, fnp_html_css and fnp_html_js, written
# inline by views/html.c. Byte arrays, not string literals: C11 promises string literals
# of only 4095 characters. The page writes them inside <style> and <script>, so a file
# that could end its element early is refused here rather than breaking every report.
foreach(var CSS JS)
    file(READ ${${var}} text)
    string(TOLOWER "${text}" low)
    if(low MATCHES "</style|</script|<!--")
        message(FATAL_ERROR "${${var}}: holds </style, </script or <!--, which would end or "
                            "break its inline element")
    endif()
    file(READ ${${var}} hex HEX)
    string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
    # 12 bytes a line.
    string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n    "
           bytes "${bytes}")
    string(TOLOWER ${var} name)
    string(APPEND out "static const char fnp_html_${name}[] = {\n    ${bytes}0x00};\n")
endforeach()
set(out "/* Generated from views/html/ by views/html/embed.cmake: do not edit. */\n${out}")
# Rewritten only when it changes, so that a touched source does not rebuild for nothing.
if(EXISTS ${OUT})
    file(READ ${OUT} old)
endif()
if(NOT old STREQUAL out)
    file(WRITE ${OUT} "${out}")
endif()
