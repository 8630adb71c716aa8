# A hand-written assembly file with gcc's shapes in it, none of them a site of gcc's:
# fnprof-as must hand it to the assembler byte for byte (tests/patchable, case filter).
	.text
	.globl	hw_loop
	.type	hw_loop, @function
hw_loop:
1:	call	__fentry__          # a call with no __mcount_loc entry after it
	decl	%edi; jnz 1b        # two statements; "1b" in a comment ; .section .x
	.section __mcount_loc, "a",@progbits
	.quad 1b
	.previous
1:
	.byte	0x0f, 0x1f, 0x44, 0x00, 0x00
	.section __return_loc, "a",@progbits
	.quad 2f
	.previous
2:	ret
	.size	hw_loop, .-hw_loop
	.pushsection .rodata.hw, "a", @progbits; .ascii "1:\tcall\t__fentry__; #"; .popsection
	.section	.text.hw_group,"axG",@progbits,hw_group,comdat
	.weak	hw_group
hw_group:
	.byte	0x0f, 0x1f, 0x44, 0x00, 0x00
	ret
	.section	.note.GNU-stack,"",@progbits
	nop
# SPDX-License-Identifier: MIT