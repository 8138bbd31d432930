/* A minimal MPIR starter with a large process table, for checking that a
 * live read of the table is correct and batched (few process_vm_readv).
 *
 *   mpir_table N
 *
 * Fills MPIR_proctable with N entries: host "node-<i/64>" (64 ranks share
 * one host string, as launchers share them), executable
 * "/opt/app/rank-<i>" (one string per rank) and pid 100000+i. Prints each
 * entry as "host executable pid", then "ready", and waits to be killed. */
#define _GNU_SOURCE /* asprintf */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

typedef struct {
    char *host_name;
    char *executable_name;
    int pid;
} MPIR_PROCDESC;

__attribute__((used)) MPIR_PROCDESC *MPIR_proctable;
__attribute__((used)) int MPIR_proctable_size;
__attribute__((used)) volatile int MPIR_debug_state;
__attribute__((used)) volatile int MPIR_debug_gate;
__attribute__((used)) int MPIR_being_debugged;
__attribute__((used)) int MPIR_i_am_starter;

__attribute__((used, noinline)) void MPIR_Breakpoint(void) {
    __asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 1000;
    if (n < 0)
        return 2;
    int hosts = (n + 63) / 64;
    char **host = calloc((size_t)hosts + 1, sizeof *host);
    MPIR_PROCDESC *table = calloc((size_t)n + 1, sizeof *table);
    if (!host || !table)
        return 1;
    for (int h = 0; h < hosts; h++)
        if (asprintf(&host[h], "node-%d", h) < 0)
            return 1;
    for (int i = 0; i < n; i++) {
        table[i].host_name = host[i / 64];
        if (asprintf(&table[i].executable_name, "/opt/app/rank-%d", i) < 0)
            return 1;
        table[i].pid = 100000 + i;
    }
    MPIR_proctable = table;
    MPIR_proctable_size = n;
    MPIR_debug_state = 1; /* MPIR_DEBUG_SPAWNED */
    MPIR_Breakpoint();
    for (int i = 0; i < n; i++)
        printf("%s %s %d\n", table[i].host_name, table[i].executable_name, table[i].pid);
    printf("ready\n");
    fflush(stdout);
    for (;;)
        pause();
}
