/* SPDX-License-Identifier: MIT */
/*
 * The two ways a PLT hook can get control back after the callee (bench/libcalls.py
 * --mechanism, docs/libcalls.md "Why the trampoline calls the function"), with the same
 * bookkeeping (the return address into a record, the record stack's top moved) and no
 * clock, so that only the mechanism differs:
 *   mech_callthru  fnprof's: pop the return address, call the function, push it back, ret
 *   mech_hijack    uftrace's: overwrite the return address with a thunk, jump to the
 *                  function; the thunk jumps back to the saved address
 * Both reach mech_target (in r11) for a function of one integer argument.
 */
    .text
    .globl mech_callthru
    .type mech_callthru, @function
mech_callthru:
    lea mech_target(%rip), %r11
    mov mech_top(%rip), %r10
    pop (%r10)
    mov %rbx, 8(%r10)
    mov %r10, %rbx
    add $16, %r10
    mov %r10, mech_top(%rip)
    call *%r11
    push (%rbx)
    mov %rbx, mech_top(%rip)
    mov 8(%rbx), %rbx
    ret
    .size mech_callthru, .-mech_callthru

    .globl mech_hijack
    .type mech_hijack, @function
mech_hijack:
    lea mech_target(%rip), %r11
    mov mech_top(%rip), %r10
    mov (%rsp), %rax
    mov %rax, (%r10)
    add $16, %r10
    mov %r10, mech_top(%rip)
    lea mech_thunk(%rip), %rax
    mov %rax, (%rsp)
    jmp *%r11
mech_thunk:
    mov mech_top(%rip), %r10
    sub $16, %r10
    mov %r10, mech_top(%rip)
    jmp *(%r10)
    .size mech_hijack, .-mech_hijack

    .data
    .globl mech_top
mech_top:
    .quad mech_records
    .bss
    .p2align 6
mech_records:
    .zero 4096

    .section .note.GNU-stack, "", @progbits
