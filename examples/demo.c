/*
 * fnprof's bundled example: a small word-frequency job with the shapes a profile should
 * show clearly: a hot leaf (hash_word), recursion (quicksort, and a recursive-descent
 * expression evaluator), a function with several callers (compare_counts), and two
 * worker threads next to the main one.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TABLE_SIZE 4096
#define WORDS 200000

struct entry {
    char word[16];
    unsigned count;
};

struct table {
    struct entry slots[TABLE_SIZE];
};

static unsigned next_random(unsigned *state)
{
    *state = *state * 1103515245u + 12345u;
    return (*state >> 16) & 0x7fff;
}

static void make_word(unsigned *state, char *out)
{
    static const char syllables[][4] = {"ka", "lo", "mi", "nu", "pe", "ra", "so", "ti"};
    int n = 1 + next_random(state) % 3;
    out[0] = 0;
    for (int i = 0; i < n; i++)
        strcat(out, syllables[next_random(state) % 8]);
}

static unsigned hash_word(const char *w)
{
    unsigned h = 2166136261u;
    for (; *w; w++)
        h = (h ^ (unsigned char)*w) * 16777619u;
    return h;
}

static void count_word(struct table *t, const char *w)
{
    unsigned i = hash_word(w) % TABLE_SIZE;
    while (t->slots[i].count && strcmp(t->slots[i].word, w) != 0)
        i = (i + 1) % TABLE_SIZE;
    strcpy(t->slots[i].word, w);
    t->slots[i].count++;
}

static void count_corpus(struct table *t, unsigned seed)
{
    char word[16];
    for (int i = 0; i < WORDS; i++) {
        make_word(&seed, word);
        count_word(t, word);
    }
}

static int compare_counts(const struct entry *a, const struct entry *b)
{
    if (a->count != b->count)
        return a->count > b->count ? -1 : 1;
    return strcmp(a->word, b->word);
}

static void quicksort(struct entry *v, int n)
{
    if (n < 2)
        return;
    struct entry pivot = v[n / 2], tmp;
    int i = 0, j = n - 1;
    while (i <= j) {
        while (compare_counts(&v[i], &pivot) < 0)
            i++;
        while (compare_counts(&v[j], &pivot) > 0)
            j--;
        if (i <= j) {
            tmp = v[i], v[i] = v[j], v[j] = tmp;
            i++, j--;
        }
    }
    quicksort(v, j + 1);
    quicksort(v + i, n - i);
}

static int compact(struct table *t)
{
    int n = 0;
    for (int i = 0; i < TABLE_SIZE; i++)
        if (t->slots[i].count)
            t->slots[n++] = t->slots[i];
    return n;
}

/* expr := term ('+' term)* ; term := factor ('*' factor)* ; factor := digit | '(' expr ')' */
static long parse_expr(const char **s);

static long parse_factor(const char **s)
{
    if (**s == '(') {
        (*s)++;
        long v = parse_expr(s);
        (*s)++;
        return v;
    }
    return *(*s)++ - '0';
}

static long parse_term(const char **s)
{
    long v = parse_factor(s);
    while (**s == '*') {
        (*s)++;
        v *= parse_factor(s);
    }
    return v;
}

static long parse_expr(const char **s)
{
    long v = parse_term(s);
    while (**s == '+') {
        (*s)++;
        v += parse_term(s);
    }
    return v;
}

static long evaluate(const char *text)
{
    return parse_expr(&text);
}

static void *worker(void *arg)
{
    struct table *t = calloc(1, sizeof(*t));
    count_corpus(t, (unsigned)(size_t)arg);
    int n = compact(t);
    quicksort(t->slots, n);
    free(t);
    return NULL;
}

int main(void)
{
    pthread_t threads[2];
    for (size_t i = 0; i < 2; i++)
        pthread_create(&threads[i], NULL, worker, (void *)(i + 7));

    struct table *t = calloc(1, sizeof(*t));
    count_corpus(t, 42);
    int n = compact(t);
    quicksort(t->slots, n);
    printf("%d distinct words; most frequent: %s (%u)\n", n, t->slots[0].word, t->slots[0].count);

    long total = 0;
    for (int i = 0; i < 2000; i++)
        total += evaluate("(1+2*(3+4))*((5+6)*7+8*(9+(1+2)*3))+((2*3+4)*5+6)");
    printf("expression total: %ld\n", total);

    for (size_t i = 0; i < 2; i++)
        pthread_join(threads[i], NULL);
    free(t);
    return 0;
}
/* SPDX-License-Identifier: MIT */
