/* Execs itself from inside an instrumented function (argv[1] "ok": /proc/self/exe with
 * argument "second"), or tries to exec a path that does not exist ("fail") and goes on.
 * Expected (run_robust.py, case "reexec"): "ok": PROF_OUTPUT holds the first image's
 * calls (do_exec still open at the exec), PROF_OUTPUT.exec1 the second image's; "fail":
 * PROF_OUTPUT written before the exec and again at exit, with every call once. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int work(int x)
{
    return x * 2;
}

int do_exec(const char *path)
{
    execl(path, path, "second", (char *)NULL);
    return -1;
}

int main(int argc, char **argv)
{
    int s = 0;
    if (argc < 2)
        return 2;
    if (!strcmp(argv[1], "second")) {
        for (int i = 0; i < 3; i++)
            s += work(i);
        printf("second image: %d\n", s);
        return 0;
    }
    for (int i = 0; i < 5; i++)
        s += work(i);
    printf("first image: %d\n", s);
    fflush(stdout);
    do_exec(!strcmp(argv[1], "fail") ? "/nonexistent/reexec" : "/proc/self/exe");
    for (int i = 0; i < 2; i++)
        s += work(i);
    printf("exec failed: %d\n", s);
    return 0;
}
/* SPDX-License-Identifier: MIT */
