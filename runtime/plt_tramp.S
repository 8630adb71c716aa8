/* SPDX-License-Identifier: MIT */
/*
 * The trampoline of PROF_LIBCALLS (x86_64, System V): every hooked GOT slot holds a stub
 * that loads its entry (struct fnp_lc_entry) into %r11 and jumps here. plt.h says why the
 * call is made from here rather than by taking over the return address; in short:
 *
 *   entry          [rsp] = the caller's return address, [rsp+8...] = stack arguments
 *   pop it         into a record (struct fnp_lc_rec, per thread), %rbx := the record
 *   call *real     its return address (fnp_lc_ret) lands in the very slot: the callee finds
 *                  its stack arguments where the caller put them, however many
 *   fnp_lc_ret     push the return address back, restore %rbx, end the call, ret
 *
 * Unwinding: at the call, the frame's CFA is %rsp and the caller's return address and %rbx
 * are in the record, which %rbx (callee-saved) points to; DW_CFA_expression says so. The
 * personality routine (plt_call.c) sends the cleanup phase of an exception or of
 * pthread_exit to fnp_lc_landing, which ends the call and unwinds on.
 *
 * Registers: at entry %r10 and %r11 are free (the PLT uses them too); the argument
 * registers (and %rax: a variadic call's count of vector registers) are kept around
 * fnp_lc_enter, which uses no vector register (plt_fast.c); the slow paths run under
 * fnp_lc_call_saving, which keeps the whole x87/SSE/AVX state (XSAVE, as glibc's lazy
 * binding does) for the arguments on the way in and the return value on the way out.
 */
#include "plt.h"

#ifdef FNP_HAVE_LIBCALLS

/* DW_CFA_expression (0x10), register, length 2, DW_OP_breg3 (0x73) offset: the register
 * is saved at %rbx + offset. */
#define CFI_AT_RBX(reg, off) .cfi_escape 0x10, reg, 0x02, 0x73, off

/* The argument registers, and %rax (a variadic call's count of vector registers), in the
 * first 56 bytes of the trampoline's frame: kept there around fnp_lc_enter, and put back
 * for the callee whichever way the call goes on. */
.macro save_args
    mov %rdi, 0(%rsp)
    mov %rsi, 8(%rsp)
    mov %rdx, 16(%rsp)
    mov %rcx, 24(%rsp)
    mov %r8, 32(%rsp)
    mov %r9, 40(%rsp)
    mov %rax, 48(%rsp)
.endm
.macro load_args
    mov 0(%rsp), %rdi
    mov 8(%rsp), %rsi
    mov 16(%rsp), %rdx
    mov 24(%rsp), %rcx
    mov 32(%rsp), %r8
    mov 40(%rsp), %r9
    mov 48(%rsp), %rax
.endm

/* The return address and the caller's %rbx pushed back from the record (%rbx) on the way
 * out, normal or unwound: the frame is then as the caller's call left it, plus %rbx. */
.macro push_caller
    push FNP_LC_R_RA(%rbx)
    .cfi_adjust_cfa_offset 8
    .cfi_offset 16, -8
    push FNP_LC_R_RBX(%rbx)
    .cfi_adjust_cfa_offset 8
    .cfi_offset %rbx, -16
.endm

    .text
    .p2align 4
    .globl fnp_lc_tramp
    .hidden fnp_lc_tramp
    .type fnp_lc_tramp, @function
fnp_lc_tramp:
    .cfi_startproc
    .cfi_personality 0x1b, fnp_lc_personality
    /* calls from another object than the slot's, or while nothing is recorded: untouched */
    mov (%rsp), %r10
    cmp FNP_LC_E_LO(%r11), %r10
    jb 1f
    cmp FNP_LC_E_HI(%r11), %r10
    jae 1f
    cmpq $0, fnp_recording(%rip)
    jne 2f
1:  jmp *FNP_LC_E_REAL(%r11)
2:  sub $72, %rsp
    .cfi_adjust_cfa_offset 72
    save_args
    mov %r11, 56(%rsp)
    mov %r11, %rdi
    lea 72(%rsp), %rsi
    mov %rsp, %rdx
    call fnp_lc_enter
    cmp $FNP_LC_PASS, %rax
    ja .Lgo
    je .Lpass
    lea fnp_lc_enter_slow(%rip), %rdi
    mov 56(%rsp), %rsi
    lea 72(%rsp), %rdx
    mov %rsp, %rcx
    call fnp_lc_call_saving
    cmp $FNP_LC_PASS, %rax
    ja .Lgo
.Lpass:
    load_args
    mov 56(%rsp), %r11
    add $72, %rsp
    .cfi_adjust_cfa_offset -72
    jmp *FNP_LC_E_REAL(%r11)
    .cfi_adjust_cfa_offset 72
.Lgo:
    mov %rbx, FNP_LC_R_RBX(%rax)
    mov %rax, %rbx
    CFI_AT_RBX(3, FNP_LC_R_RBX)
    load_args
    /* drop the saved registers and the return address (the record holds it) */
    add $80, %rsp
    .cfi_def_cfa_offset 0
    CFI_AT_RBX(16, FNP_LC_R_RA)
    .cfi_remember_state
    call *FNP_LC_R_REAL(%rbx)
    .globl fnp_lc_ret
    .hidden fnp_lc_ret
fnp_lc_ret:
    push_caller
    push %rax
    push %rdx
    .cfi_adjust_cfa_offset 16
    mov %rbx, %rdi
    call fnp_lc_exit
    test %eax, %eax
    jnz 3f
    lea fnp_lc_exit_slow(%rip), %rdi
    mov %rbx, %rsi
    call fnp_lc_call_saving
3:  pop %rdx
    pop %rax
    .cfi_adjust_cfa_offset -16
    pop %rbx
    .cfi_adjust_cfa_offset -8
    .cfi_restore %rbx
    ret
    /* Reached by the unwinder at the call's state: %rsp the caller's after the return,
     * %rbx the record, %rax the exception. */
    .cfi_restore_state
    .globl fnp_lc_landing
    .hidden fnp_lc_landing
fnp_lc_landing:
    push_caller
    push %rax
    sub $8, %rsp
    .cfi_adjust_cfa_offset 16
    mov %rbx, %rdi
    call fnp_lc_unwound
    mov 8(%rsp), %rdi
    call *fnp_lc_resume(%rip)
    ud2
    .cfi_endproc
    .size fnp_lc_tramp, .-fnp_lc_tramp

/*
 * uintptr_t fnp_lc_call_saving(fn, a, b, c): fn(a, b, c) with the x87, SSE and AVX state
 * (XSAVE's components 0-3 and 5-7, glibc's own choice for lazy binding, plus x87 for a
 * long double's return) saved around it, or FXSAVE's where the CPU has no XSAVE.
 */
    .p2align 4
    .globl fnp_lc_call_saving
    .hidden fnp_lc_call_saving
    .type fnp_lc_call_saving, @function
fnp_lc_call_saving:
    .cfi_startproc
    push %rbp
    .cfi_adjust_cfa_offset 8
    .cfi_offset %rbp, -16
    mov %rsp, %rbp
    .cfi_def_cfa_register %rbp
    push %r12
    .cfi_offset %r12, -24
    push %r13
    .cfi_offset %r13, -32
    push %r14
    .cfi_offset %r14, -40
    push %r15
    .cfi_offset %r15, -48
    mov %rdi, %r12
    mov %rsi, %r13
    mov %rdx, %r14
    mov %rcx, %r15
    and $-64, %rsp
    mov fnp_lc_xsave_size(%rip), %rax
    test %rax, %rax
    jz 1f
    sub %rax, %rsp
    xor %eax, %eax
    /* the XSAVE header (bytes 512-575): XSTATE_BV and XCOMP_BV must start at 0 */
    .irp off, 512, 520, 528, 536, 544, 552, 560, 568
    mov %rax, \off(%rsp)
    .endr
    mov $FNP_LC_XSAVE_MASK, %eax
    xor %edx, %edx
    xsave (%rsp)
    jmp 2f
1:  sub $512, %rsp
    fxsave (%rsp)
2:  mov %r13, %rdi
    mov %r14, %rsi
    mov %r15, %rdx
    call *%r12
    mov %rax, %r12
    cmpq $0, fnp_lc_xsave_size(%rip)
    je 3f
    mov $FNP_LC_XSAVE_MASK, %eax
    xor %edx, %edx
    xrstor (%rsp)
    jmp 4f
3:  fxrstor (%rsp)
4:  mov %r12, %rax
    lea -32(%rbp), %rsp
    pop %r15
    pop %r14
    pop %r13
    pop %r12
    pop %rbp
    .cfi_def_cfa %rsp, 8
    ret
    .cfi_endproc
    .size fnp_lc_call_saving, .-fnp_lc_call_saving

#endif

    .section .note.GNU-stack, "", @progbits
