/*
 * starter.c: a minimal MPIR starter for the launch tests. It forks N child
 * "ranks" that wait for the debugger at MPIR_debug_gate (each in its own
 * copy of the variable), fills MPIR_proctable, stops at MPIR_Breakpoint with
 * MPIR_DEBUG_SPAWNED, then reports an abort from a second thread
 * (MPIR_DEBUG_ABORTING with MPIR_debug_abort_string), and exits 0 only if
 * every rank was released through its gate.
 *
 * usage: starter N WAIT_MS
 *   a rank not released within WAIT_MS exits 3, and the starter then 1.
 * stdout: "spawned rank I pid P" per rank, "rank I pid P gate G" from each
 * rank as it ends.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct {
  char *host_name;
  char *executable_name;
  int pid;
} MPIR_PROCDESC;

#define MPIR_DEBUG_SPAWNED 1
#define MPIR_DEBUG_ABORTING 2
#define USED __attribute__((used))

USED MPIR_PROCDESC *MPIR_proctable = 0;
USED int MPIR_proctable_size = 0;
USED volatile int MPIR_debug_state = 0;
USED volatile int MPIR_debug_gate = 0;
USED volatile int MPIR_being_debugged = 0;
USED char *MPIR_debug_abort_string = 0;
USED int MPIR_i_am_starter = 0;

USED __attribute__((noinline)) void MPIR_Breakpoint(void) {
  __asm__ volatile("" ::: "memory");
}

static void *report_abort(void *arg) {
  (void)arg;
  MPIR_debug_abort_string = "rank 1 called MPI_Abort (starter test)";
  MPIR_debug_state = MPIR_DEBUG_ABORTING;
  MPIR_Breakpoint();
  return 0;
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 3;
  int wait_ms = argc > 2 ? atoi(argv[2]) : 10000;
  static char host[256];
  if (n < 1 || gethostname(host, sizeof host - 1) != 0) return 2;
  MPIR_proctable = calloc((size_t)n, sizeof *MPIR_proctable);
  if (!MPIR_proctable) return 2;
  for (int i = 0; i < n; i++) {
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) return 2;
    if (pid == 0) {
      for (int t = 0; t < wait_ms && !MPIR_debug_gate; t++) usleep(1000);
      printf("rank %d pid %d gate %d\n", i, (int)getpid(), MPIR_debug_gate);
      fflush(stdout);
      _exit(MPIR_debug_gate ? 0 : 3);
    }
    MPIR_proctable[i].host_name = host;
    MPIR_proctable[i].executable_name = argv[0];
    MPIR_proctable[i].pid = (int)pid;
    printf("spawned rank %d pid %d\n", i, (int)pid);
  }
  fflush(stdout);
  MPIR_proctable_size = n;
  MPIR_debug_state = MPIR_DEBUG_SPAWNED;
  MPIR_Breakpoint();

  pthread_t t;
  if (pthread_create(&t, 0, report_abort, 0) != 0) return 2;
  pthread_join(t, 0);

  int failed = 0;
  for (int i = 0; i < n; i++) {
    int status = 0;
    if (waitpid(MPIR_proctable[i].pid, &status, 0) < 0 || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0)
      failed++;
  }
  return failed ? 1 : 0;
}
