/* proctable_starter.c: an MPIR starter with a large process table, for the
 * P1 benchmark on a real gcore core (scripts/bench-1m-table.sh).
 *
 *   proctable_starter N
 *
 * Fills MPIR_proctable with N entries the way a launcher on a cluster of
 * 16 nodes running one program does: every entry points at one of 16 host
 * names and at one executable name, all string literals in .rodata. gcore
 * leaves that read-only file mapping out of the core, so a reader of the
 * core finds the strings in the executable file. Stops at MPIR_Breakpoint
 * with MPIR_DEBUG_SPAWNED, prints "ready" and waits to be killed. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

typedef struct {
  char *host_name;
  char *executable_name;
  int pid;
} MPIR_PROCDESC;

#define USED __attribute__((used))
USED MPIR_PROCDESC *MPIR_proctable;
USED int MPIR_proctable_size;
USED volatile int MPIR_debug_state;
USED volatile int MPIR_debug_gate;
USED int MPIR_being_debugged;
USED int MPIR_i_am_starter;

USED __attribute__((noinline)) void MPIR_Breakpoint(void) {
  __asm__ volatile("" ::: "memory");
}

static const char *const hosts[16] = {
  "node-00.cluster.example", "node-01.cluster.example", "node-02.cluster.example",
  "node-03.cluster.example", "node-04.cluster.example", "node-05.cluster.example",
  "node-06.cluster.example", "node-07.cluster.example", "node-08.cluster.example",
  "node-09.cluster.example", "node-10.cluster.example", "node-11.cluster.example",
  "node-12.cluster.example", "node-13.cluster.example", "node-14.cluster.example",
  "node-15.cluster.example",
};

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 1000000;
  if (n < 1 || n > 100000000) return 2;
  MPIR_PROCDESC *t = malloc((size_t)n * sizeof *t);
  if (!t) return 1;
  for (long i = 0; i < n; i++) {
    t[i].host_name = (char *)hosts[i * 16 / n];
    t[i].executable_name = (char *)"/opt/app/bin/ring";
    t[i].pid = (int)(100000 + i);
  }
  MPIR_proctable = t;
  MPIR_proctable_size = (int)n;
  MPIR_debug_state = 1; /* MPIR_DEBUG_SPAWNED */
  MPIR_Breakpoint();
  printf("ready\n");
  fflush(stdout);
  for (;;) pause();
}
