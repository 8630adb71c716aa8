/* SPDX-License-Identifier: MIT */
/*
 * What a patched site calls (through its object's stub page, patch.c): the enter and exit of
 * a patchable build, the counterparts of hooks.c's pair, reaching the same tree with the same
 * steady code (runtime.h: fnp_cct_probe, fnp_cct_push_as, fnp_trace_add).
 *
 * A site is no call the compiler planned: every register may be live there (arguments at
 * an entry or before a tail jmp, return values before a ret). So these functions save what
 * they use and no more (no_caller_saved_registers), touch no vector or x87 register (this
 * file is compiled with -mgeneral-regs-only: runtime/CMakeLists.txt), keep off the red zone
 * (-mno-red-zone: the cold call below pushes), and never call C compiled otherwise: every
 * cold path goes through fnp_patch_cold (below), which saves all the registers and
 * the extended state (xsave) around it. They take no arguments: the function comes from the
 * return address (the site's end), the frame's sp from the stack pointer at the site.
 * (The sanitizer builds compile this file with their flags, not those: the cold call skips
 * the red zone itself, and the trampolines are never reached there, built for -finstrument-
 * functions' hooks.)
 *
 * The frame's sp is the stack pointer at the site, which points at the function's return
 * address, less 16: the measure hooks.c gives a frame (its hook's frame address), so that
 * interpose.c's cuts (longjmp, a catch) treat both kinds of frames alike. An entry and every
 * exit of one call see the same stack pointer, so an exit pops the frame with its sp
 * (patch_exit_cold: frames above it returned unseen, and close with it; no frame with it,
 * an exit of a call entered while paused, or on another stack: ignored).
 */
#include "patch.h"

#if defined(__x86_64__) && defined(__linux__)

#define FNP_TRAMPOLINE __attribute__((no_caller_saved_registers, no_instrument_function, used))
#define FNP_INLINE static inline __attribute__((always_inline, no_instrument_function))

/* Modes the steady paths are built for (as hooks.c's FNP_EXPECT). */
#define MODE_TIMED 0
#define MODE_COUNT 1
#define MODE_TRACE 2
#define EXPECT(rec, mode)                                                                          \
    ((mode) == MODE_COUNT   ? ((rec)&FNP_ON_COUNT) != 0                                            \
     : (mode) == MODE_TRACE ? ((rec)&FNP_ON_MODES) == FNP_ON_TRACE                                 \
                            : !((rec)&FNP_ON_MODES))

/* EXPECT, and recording (not off: 0 after the exit dump), in one test. */
#define EXPECT_ON(rec, mode)                                                                       \
    ((mode) == MODE_COUNT                                                                          \
         ? ((rec) & (FNP_ON | FNP_ON_COUNT | FNP_ON_PAUSED)) == (FNP_ON | FNP_ON_COUNT)            \
     : (mode) == MODE_TRACE ? ((rec) & (FNP_ON | FNP_ON_MODES)) == (FNP_ON | FNP_ON_TRACE)         \
                            : ((rec) & (FNP_ON | FNP_ON_MODES)) == FNP_ON)

typedef void fnp_cold_fn(uintptr_t, uintptr_t);

/* fnp_thread.patch_entering set (fn) before anything of the entry, or cleared (0) after
 * (compiler-ordered; x86 keeps stores in order); patch.c reads it from other threads. */
FNP_INLINE void entering(struct fnp_thread *t, uintptr_t fn)
{
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    __atomic_store_n(&t->patch_entering, fn, __ATOMIC_RELAXED);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
}

/*
 * fnp_patch_cold: the trampolines' way into ordinary C. It saves all the general registers a
 * C function may clobber, and the whole extended state (xsave: x87, SSE, AVX, AVX-512 as the
 * kernel enabled them, sized by patch.c before any site is patched; fxsave where the
 * processor has no xsave), then calls f(a, b) on an aligned stack.
 * In: %rax f, %rdi a, %rsi b. Preserves every register but the flags.
 */
__asm__(".text\n"
        "    .globl  fnp_patch_cold\n"
        "    .hidden fnp_patch_cold\n"
        "    .type   fnp_patch_cold, @function\n"
        "fnp_patch_cold:\n"
        "    .cfi_startproc\n"
        "    push    %rbp\n"
        "    .cfi_def_cfa_offset 16\n"
        "    .cfi_offset %rbp, -16\n"
        "    mov     %rsp, %rbp\n"
        "    .cfi_def_cfa_register %rbp\n"
        "    push    %rax\n"
        "    push    %rcx\n"
        "    push    %rdx\n"
        "    push    %rsi\n"
        "    push    %rdi\n"
        "    push    %r8\n"
        "    push    %r9\n"
        "    push    %r10\n"
        "    push    %r11\n"
        "    mov     fnp_patch_xsave_size(%rip), %rcx\n"
        "    test    %rcx, %rcx\n"
        "    jz      1f\n"
        "    sub     %rcx, %rsp\n"
        "    and     $-64, %rsp\n"
        "    /* the area's header (bytes 512-575) must be zero for xrstor */\n"
        "    xor     %eax, %eax\n"
        "    mov     %rax, 512(%rsp)\n"
        "    mov     %rax, 520(%rsp)\n"
        "    mov     %rax, 528(%rsp)\n"
        "    mov     %rax, 536(%rsp)\n"
        "    mov     %rax, 544(%rsp)\n"
        "    mov     %rax, 552(%rsp)\n"
        "    mov     %rax, 560(%rsp)\n"
        "    mov     %rax, 568(%rsp)\n"
        "    mov     fnp_patch_xsave_mask(%rip), %rax\n"
        "    mov     %rax, %rdx\n"
        "    shr     $32, %rdx\n"
        "    xsave64 (%rsp)\n"
        "    mov     -8(%rbp), %rax\n"
        "    call    *%rax\n"
        "    mov     fnp_patch_xsave_mask(%rip), %rax\n"
        "    mov     %rax, %rdx\n"
        "    shr     $32, %rdx\n"
        "    xrstor64 (%rsp)\n"
        "    jmp     2f\n"
        "1:  sub     $512, %rsp\n"
        "    and     $-64, %rsp\n"
        "    fxsave64 (%rsp)\n"
        "    call    *%rax\n"
        "    fxrstor64 (%rsp)\n"
        "2:  lea     -72(%rbp), %rsp\n"
        "    pop     %r11\n"
        "    pop     %r10\n"
        "    pop     %r9\n"
        "    pop     %r8\n"
        "    pop     %rdi\n"
        "    pop     %rsi\n"
        "    pop     %rdx\n"
        "    pop     %rcx\n"
        "    pop     %rax\n"
        "    pop     %rbp\n"
        "    .cfi_def_cfa %rsp, 8\n"
        "    ret\n"
        "    .cfi_endproc\n"
        "    .size   fnp_patch_cold, .-fnp_patch_cold\n");

/* f(a, b), f being ordinary C. */
FNP_INLINE void cold_call(fnp_cold_fn *f, uintptr_t a, uintptr_t b)
{
    __asm__ volatile("lea -128(%%rsp), %%rsp\n\tcall fnp_patch_cold\n\tlea 128(%%rsp), %%rsp"
                     :
                     : "a"(f), "D"(a), "S"(b)
                     : "memory", "cc");
}

/* ---- cold paths: ordinary C, reached through fnp_patch_cold ------------------------------ */

/* A thread's first patched call, or a mode the steady path is not built for (paused, a clock
 * that is a call). Paused, nothing is pushed: the site was patched when the pause began and
 * this call is not recorded (docs/controls.md). A thread that attaches here is listed
 * before it says what it enters, and reads fnp_recording after a full fence: a pause that
 * did not see it is then seen by this thread (patch.c: entering). */
static FNP_COLD void enter_cold(uintptr_t fn, uintptr_t sp)
{
    struct fnp_thread *t = fnp_tls;
    int attached = !t;
    if (!t && !(t = fnp_thread_attach()))
        return;
    if (attached) {
        __atomic_store_n(&t->patch_entering, fn, __ATOMIC_RELAXED);
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
    }
    uint64_t rec = __atomic_load_n(&fnp_recording, __ATOMIC_RELAXED);
    if (rec && !(rec & FNP_ON_PAUSED)) {
        /* a dropped call (out of memory) needs no skip count: its exit finds no frame */
        uint64_t skipped = t->skipped;
        fnp_cct_enter(t, fnp_key(fn, rec), fnp_clock_now(), sp);
        t->skipped = skipped;
    }
    if (attached)
        entering(t, 0);
}

/* An exit whose frame is not the innermost one, or in a mode the steady path is not built
 * for: the frame at depth (the one with the exit's sp, leave_other found it) closes, with
 * those above it. */
static FNP_COLD void exit_cold(uintptr_t depth, uintptr_t unused)
{
    (void)unused;
    struct fnp_thread *t = fnp_tls;
    if (__atomic_load_n(&fnp_recording, __ATOMIC_RELAXED))
        fnp_cct_cut(t, (uint32_t)depth, fnp_clock_now());
}

/* ---- the steady paths --------------------------------------------------------------------- */

#define FNP_TRAMPOLINE_COLD                                                                        \
    __attribute__((no_caller_saved_registers, no_instrument_function, noinline, cold))
/* After a call of one of those: never a tail call. clang 14 restores the registers of a
 * no_caller_saved_registers function before its tail call, arguments included, which
 * then reach the callee as the site had them. */
#define NO_TAIL_CALL() __asm__ volatile("")

/* Another child than the one entered last, or anything else but the steady case: the probe
 * of the caller's children (as hooks.c's other_child), else the cold path. Out of line, and
 * saving what it uses itself, so that the steady path saves only its own registers. */
FNP_INLINE void enter_other(struct fnp_thread *t, uintptr_t fn, uintptr_t sp, int mode)
{
    uint64_t rec = __atomic_load_n(&fnp_recording, __ATOMIC_RELAXED);
    uintptr_t key = fnp_key(fn, rec);
    uint32_t d = t->depth;
    struct fnp_node *parent = t->frames[(ptrdiff_t)d - 1].node, *n;
    if (rec && EXPECT(rec, mode) && d < t->cap && (n = fnp_cct_probe(t, parent, key)) != NULL) {
        parent->hot = n;
        fnp_cct_push_as(t, d, n, mode != MODE_COUNT ? fnp_clock_tsc() : 0, sp, mode != MODE_COUNT);
        return;
    }
    if (rec)
        cold_call(enter_cold, fn, sp);
}

FNP_TRAMPOLINE_COLD static void enter_other_timed(struct fnp_thread *t, uintptr_t fn, uintptr_t sp)
{
    enter_other(t, fn, sp, MODE_TIMED);
}

FNP_TRAMPOLINE_COLD static void enter_other_count(struct fnp_thread *t, uintptr_t fn, uintptr_t sp)
{
    enter_other(t, fn, sp, MODE_COUNT);
}

FNP_TRAMPOLINE_COLD static void enter_first(uintptr_t fn, uintptr_t sp)
{
    cold_call(enter_cold, fn, sp);
}

/* An entry inside another (a signal handler's, come in the middle of one): the outer one's
 * function is kept for after, and marked hidden meanwhile (patch.c waits for it). */
FNP_INLINE void enter_nested(struct fnp_thread *t, uintptr_t fn, uintptr_t sp, int mode)
{
    uintptr_t outer = __atomic_load_n(&t->patch_entering, __ATOMIC_RELAXED);
    entering(t, fn | FNP_ENTERING_NESTED);
    enter_other(t, fn, sp, mode);
    entering(t, outer);
}

FNP_TRAMPOLINE_COLD static void enter_nested_timed(struct fnp_thread *t, uintptr_t fn, uintptr_t sp)
{
    enter_nested(t, fn, sp, MODE_TIMED);
}

FNP_TRAMPOLINE_COLD static void enter_nested_count(struct fnp_thread *t, uintptr_t fn, uintptr_t sp)
{
    enter_nested(t, fn, sp, MODE_COUNT);
}

FNP_INLINE void enter(uintptr_t fn, uintptr_t sp, int mode)
{
    struct fnp_thread *t = fnp_tls;
    if (FNP_UNLIKELY(!t)) {
        enter_first(fn, sp);
        NO_TAIL_CALL();
        return;
    }
    if (FNP_UNLIKELY(__atomic_load_n(&t->patch_entering, __ATOMIC_RELAXED))) {
        if (mode == MODE_COUNT)
            enter_nested_count(t, fn, sp);
        else
            enter_nested_timed(t, fn, sp);
        NO_TAIL_CALL();
        return;
    }
    /* what a pause must keep patched before it reads the open frames (patch.c); set
     * before fnp_recording is read, against the pause's barrier */
    entering(t, fn);
    uint64_t rec = __atomic_load_n(&fnp_recording, __ATOMIC_RELAXED);
    uint32_t d = t->depth;
    struct fnp_node *n = t->frames[(ptrdiff_t)d - 1].node->hot; /* [-1]: the root */
    if (FNP_LIKELY(n->fn == fnp_key(fn, rec) && EXPECT_ON(rec, mode) && d < t->cap))
        fnp_cct_push_as(t, d, n, mode != MODE_COUNT ? fnp_clock_tsc() : 0, sp, mode != MODE_COUNT);
    else if (mode == MODE_COUNT)
        enter_other_count(t, fn, sp);
    else
        enter_other_timed(t, fn, sp);
    entering(t, 0);
}

/* An exit whose frame is not the innermost one, or anything else but the steady case. An
 * exit with no open frame of its sp is ignored here, short of the cold call: paused, every
 * exit of a function that had a call open at the pause stays patched, and the calls entered
 * since (none pushed) all come here; through the cold call (every register and the extended
 * state saved) a hot function ran several times slower paused than recording. */
FNP_TRAMPOLINE_COLD static void leave_other(struct fnp_thread *t, uintptr_t sp)
{
    uint32_t k = t->depth;
    while (k > 0 && t->frames[k - 1].sp != sp)
        k--;
    if (k > 0)
        cold_call(exit_cold, k - 1, 0);
}

FNP_INLINE void leave(uintptr_t sp, int mode)
{
    uint64_t rec = __atomic_load_n(&fnp_recording, __ATOMIC_RELAXED);
    struct fnp_thread *t = fnp_tls;
    if (FNP_UNLIKELY(!t))
        return;
    uint32_t d = t->depth;
    struct fnp_frame *f = &t->frames[(ptrdiff_t)d - 1]; /* [-1]: sp 0, never a site's */
    if (FNP_UNLIKELY(f->sp != sp || !EXPECT_ON(rec, mode) ||
                     (mode == MODE_TRACE && t->trace_cur == t->trace_end))) {
        leave_other(t, sp);
        NO_TAIL_CALL();
        return;
    }
    if (mode != MODE_COUNT) {
        struct fnp_node *n = f->node;
        uint64_t now = fnp_clock_tsc();
        __atomic_store_n(&n->ticks, n->ticks + (now - f->t0), __ATOMIC_RELAXED);
        if (mode == MODE_TRACE)
            fnp_trace_add(t, n, f->t0, now);
    }
    __atomic_store_n(&t->depth, d - 1, __ATOMIC_RELEASE);
}

/* The stack pointer at the site: the CFA of a trampoline the site called; one word above
 * it for one the site jumped to (an XRay exit: this returns for the function). */
#define SP_CALLED() ((uintptr_t)__builtin_dwarf_cfa() - 16)
#define SP_JUMPED() ((uintptr_t)__builtin_dwarf_cfa() - 24)

#define ENTER(name, back, mode)                                                                    \
    FNP_TRAMPOLINE static void name(void)                                                          \
    {                                                                                              \
        enter((uintptr_t)__builtin_return_address(0) - (back), SP_CALLED(), mode);                 \
    }
#define LEAVE(name, sp, mode)                                                                      \
    FNP_TRAMPOLINE static void name(void)                                                          \
    {                                                                                              \
        leave(sp, mode);                                                                           \
    }
#define TRAMPOLINES(suffix, mode)                                                                  \
    ENTER(enter5_##suffix, 5, mode)                                                                \
    ENTER(enter9_##suffix, 9, mode)                                                                \
    ENTER(enter11_##suffix, 11, mode)                                                              \
    ENTER(enter15_##suffix, 15, mode)                                                              \
    LEAVE(exit_call_##suffix, SP_CALLED(), mode)                                                   \
    LEAVE(exit_jmp_##suffix, SP_JUMPED(), mode)                                                    \
    static const uintptr_t targets_##suffix[FNP_SLOTS] = {                                         \
        (uintptr_t)enter5_##suffix,  (uintptr_t)enter9_##suffix,    (uintptr_t)enter11_##suffix,   \
        (uintptr_t)enter15_##suffix, (uintptr_t)exit_call_##suffix, (uintptr_t)exit_jmp_##suffix};

TRAMPOLINES(timed, MODE_TIMED)
TRAMPOLINES(count, MODE_COUNT)
TRAMPOLINES(trace, MODE_TRACE)

const uintptr_t *fnp_patch_targets(uint64_t modes)
{
    if (modes & FNP_ON_COUNT)
        return targets_count;
    return modes & FNP_ON_TRACE ? targets_trace : targets_timed;
}

#endif
