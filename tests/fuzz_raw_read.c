/*
 * libFuzzer target for the raw snapshot reader (what `fnprof symbolize` reads). Beyond
 * "no crash, no leak, no undefined behaviour", a file that reads must build a profile
 * (fnp_profile_build, addresses unnamed) without error: parents first, links resolved.
 * Starts from the sample of tests/raw_sample.h, which it adds to the corpus itself.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "fuzz_check.h"
#include "profile.h"
#include "raw_sample.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned seed);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fnp_raw_file f;
    char why[256];
    int rc = fnp_raw_read(&f, data, size, why, sizeof(why));
    CHECK(rc == 0 || rc == -EINVAL || rc == -ENOMEM);
    if (rc == 0) {
        struct fnp_profile p;
        fnp_profile_init(&p);
        int b = fnp_profile_build(&p, &f.raw, NULL);
        CHECK(b == 0 || b == -ENOMEM);
        fnp_profile_free(&p);
    }
    fnp_raw_file_free(&f);
    return 0;
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned seed)
{
    (void)seed;
    size_t seeded = raw_sample_seed(data, size, max_size);
    if (seeded)
        return seeded;
    return LLVMFuzzerMutate(data, size, max_size);
}
/* SPDX-License-Identifier: MIT */
