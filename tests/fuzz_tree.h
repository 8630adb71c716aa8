/* What the tree fuzzers share: a file of a fixed dict and a fuzzed trailer body, with a
 * header made right for it (checksums, length), so that the fuzzer reaches the body's
 * parser and the views instead of stopping at a checksum. */
#ifndef FNPROF_FUZZ_TREE_H
#define FNPROF_FUZZ_TREE_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"
#include "profile.h"

static inline void fuzz_put_le(unsigned char *b, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        b[i] = (unsigned char)(v >> (8 * i));
}

/* dict[0, dict_len) of nfuncs keys, then a header of this kind and tick, then body[0,
 * size). Returns the malloc'd file (caller frees); its length in *len. */
static inline unsigned char *fuzz_tree_file(const void *dict, size_t dict_len, uint32_t nfuncs,
                                            uint32_t kind, double tick, const uint8_t *body,
                                            size_t size, size_t *len)
{
    *len = dict_len + FNP_TREE_HEADER + size;
    unsigned char *file = malloc(*len);
    CHECK(file);
    memcpy(file, dict, dict_len);
    memcpy(file + dict_len + FNP_TREE_HEADER, body, size);
    unsigned char *h = file + dict_len;
    uint64_t bits;
    memcpy(&bits, &tick, sizeof(bits));
    memcpy(h, FNP_TREE_MAGIC, 8);
    fuzz_put_le(h + 8, FNP_TREE_VERSION, 4);
    fuzz_put_le(h + 12, kind, 4);
    fuzz_put_le(h + 16, nfuncs, 4);
    fuzz_put_le(h + 20, fnp_crc32(0, dict, dict_len), 4);
    fuzz_put_le(h + 24, size, 8);
    fuzz_put_le(h + 36, bits, 8);
    fuzz_put_le(h + 32, fnp_tree_crc(h, body, size), 4); /* covers the fields above */
    return file;
}

/* For a whole file data[0, len) whose marshal dict ends at dict_len and is followed by a
 * trailer header: sets the header's dict checksum, body length and body checksum to fit
 * the bytes there, as a fuzzer's mutator does so that mutations reach the body. */
static inline void fuzz_tree_fix(unsigned char *data, size_t dict_len, size_t len)
{
    if (len < dict_len + FNP_TREE_HEADER || memcmp(data + dict_len, FNP_TREE_MAGIC, 8) != 0)
        return;
    unsigned char *h = data + dict_len, *body = h + FNP_TREE_HEADER;
    size_t size = len - dict_len - FNP_TREE_HEADER;
    fuzz_put_le(h + 20, fnp_crc32(0, data, dict_len), 4);
    fuzz_put_le(h + 24, size, 8);
    fuzz_put_le(h + 32, fnp_crc32(0, body, size), 4);
}

#endif
/* SPDX-License-Identifier: MIT */
