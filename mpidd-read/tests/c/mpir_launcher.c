/*
 * mpir_launcher.c: a small MPIR starter for the launch driver's tests
 * (tests/launch_driver.rs).
 *
 * usage: mpir_launcher MODE N OUTPUT
 *   peek   write "code XX" (the first byte of MPIR_Breakpoint's code) and
 *          exit 0.
 *   ranks  fork N ranks that wait at their own MPIR_debug_gate (10 s at
 *          most), list them in MPIR_proctable, and stop at MPIR_Breakpoint
 *          with MPIR_DEBUG_SPAWNED from a second thread. Then, while a
 *          debugger is still announced (MPIR_being_debugged), report an
 *          abort and stop again. Then call MPIR_Breakpoint once more with
 *          the state back to 0 (a trap left behind by a debugger that has
 *          gone would kill this process there), write "code XX
 *          being_debugged B", and exit 0 only if every rank was released
 *          through its gate.
 *   slow   as ranks, after sleeping 1 s first.
 * Its output goes to the file OUTPUT.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

static int code(void) {
  return *(volatile unsigned char *)(void *)&MPIR_Breakpoint;
}

static int ranks;

static void *spawned(void *arg) {
  (void)arg;
  MPIR_proctable_size = ranks;
  MPIR_debug_state = MPIR_DEBUG_SPAWNED;
  MPIR_Breakpoint();
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 4 || !freopen(argv[3], "w", stdout)) return 2;
  const char *mode = argv[1];
  ranks = atoi(argv[2]);
  if (!strcmp(mode, "peek")) {
    printf("code %02x\n", code());
    return 0;
  }
  if (!strcmp(mode, "slow")) sleep(1);
  static char host[256];
  if (ranks < 0 || gethostname(host, sizeof host - 1) != 0) return 2;
  MPIR_proctable = calloc((size_t)ranks + 1, sizeof *MPIR_proctable);
  if (!MPIR_proctable) return 2;
  for (int i = 0; i < ranks; i++) {
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) return 2;
    if (pid == 0) {
      for (int t = 0; t < 10000 && !MPIR_debug_gate; t++) usleep(1000);
      _exit(MPIR_debug_gate ? 0 : 3);
    }
    MPIR_proctable[i].host_name = host;
    MPIR_proctable[i].executable_name = argv[0];
    MPIR_proctable[i].pid = (int)pid;
  }
  pthread_t t;
  if (pthread_create(&t, 0, spawned, 0) != 0) return 2;
  pthread_join(t, 0);
  if (MPIR_being_debugged) {
    MPIR_debug_abort_string = "rank 0 called MPI_Abort (driver test)";
    MPIR_debug_state = MPIR_DEBUG_ABORTING;
    MPIR_Breakpoint();
  }
  MPIR_debug_state = 0;
  MPIR_Breakpoint();
  printf("code %02x being_debugged %d\n", code(), MPIR_being_debugged);
  int failed = 0;
  for (int i = 0; i < ranks; i++) {
    int status = 0;
    if (waitpid(MPIR_proctable[i].pid, &status, 0) < 0 || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0)
      failed++;
  }
  return failed ? 1 : 0;
}
