/* A process with N extra threads that sleep, for AttachGuard's tests.
 * Prints "ready" once every thread runs, then waits to be killed. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static pthread_barrier_t started;

static void *sleeper(void *arg) {
    (void)arg;
    pthread_barrier_wait(&started);
    for (;;)
        pause();
    return NULL;
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 4;
    pthread_barrier_init(&started, NULL, (unsigned)n + 1);
    for (int i = 0; i < n; i++) {
        pthread_t t;
        if (pthread_create(&t, NULL, sleeper, NULL) != 0) {
            perror("pthread_create");
            return 1;
        }
    }
    pthread_barrier_wait(&started);
    printf("ready\n");
    fflush(stdout);
    for (;;)
        pause();
}
