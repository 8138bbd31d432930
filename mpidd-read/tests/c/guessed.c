/* The target of mpidd-read's guessed-name test (tests/stacks.rs): code
 * that no sized symbol covers, as in Intel MPI's libmpi, where PMPI_Recv is
 * a 2-byte jump stub into an unnamed local function.
 *
 * main -> stub_entry, a sized global stub that jumps into hidden_body, a
 * local function right behind it whose symbol the test strips (objcopy
 * --strip-symbol) -> unsized_wait, a global function without a size, as
 * hand-written assembly often has -> blocking_read -> read(). It prints
 * "ready" first and answers each line on stdin with "pong". x86_64 only. */
#include <stdio.h>
#include <unistd.h>

static volatile int sink;

int stub_entry(int fd);

__attribute__((noinline, used)) int blocking_read(int fd)
{
    char buf[64];
    ssize_t n = read(fd, buf, sizeof buf);
    sink += (int)n;
    return (int)n;
}

/* Each function keeps a frame (its call is not a tail call), with CFI so
 * that both gdb and the unwinder walk through it. */
__asm__(".text\n"
        ".globl stub_entry\n"
        ".type stub_entry, @function\n"
        "stub_entry:\n"
        "  jmp hidden_body\n"
        ".size stub_entry, .-stub_entry\n"
        ".type hidden_body, @function\n"
        "hidden_body:\n"
        "  .cfi_startproc\n"
        "  subq $8, %rsp\n"
        "  .cfi_def_cfa_offset 16\n"
        "  call unsized_wait\n"
        "  addq $8, %rsp\n"
        "  .cfi_def_cfa_offset 8\n"
        "  ret\n"
        "  .cfi_endproc\n"
        ".size hidden_body, .-hidden_body\n"
        ".globl unsized_wait\n"
        ".type unsized_wait, @function\n"
        "unsized_wait:\n"
        "  .cfi_startproc\n"
        "  subq $8, %rsp\n"
        "  .cfi_def_cfa_offset 16\n"
        "  call blocking_read@PLT\n"
        "  addq $8, %rsp\n"
        "  .cfi_def_cfa_offset 8\n"
        "  ret\n"
        "  .cfi_endproc\n");

int main(void)
{
    puts("ready");
    fflush(stdout);
    while (stub_entry(0) > 0) {
        puts("pong");
        fflush(stdout);
    }
    return sink == 12345;
}
