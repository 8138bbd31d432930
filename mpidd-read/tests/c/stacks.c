/* The target of mpidd-read's stack tests (tests/stacks.rs).
 *
 * The main thread answers each line on stdin with "pong" from
 * main -> outer -> middle -> inner -> read(); a worker thread waits in
 * worker -> worker_wait -> pause(). Once both are about to block it prints
 * "ready". A line starting with 'a' makes inner() abort instead. Each
 * function does work after its call so that -O2 keeps the
 * frames (no tail calls), and none is inlined, so the frames gdb shows are
 * the functions named here. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile int sink;
static volatile int worker_started;

__attribute__((noinline)) int inner(int fd)
{
    char buf[64];
    ssize_t n = read(fd, buf, sizeof buf);
    /* "abort": a core from inside the stack (qemu-user writes guest cores
     * only for a fatal signal of the guest's own). */
    if (n > 0 && buf[0] == 'a')
        abort();
    sink += (int)n;
    return (int)n;
}

__attribute__((noinline)) int middle(int fd)
{
    int n = inner(fd);
    sink += n;
    return n;
}

__attribute__((noinline)) int outer(int fd)
{
    int n = middle(fd);
    sink += n;
    return n;
}

__attribute__((noinline)) void worker_wait(void)
{
    worker_started = 1;
    for (;;) {
        pause();
        sink++;
    }
}

__attribute__((noinline)) void *worker(void *arg)
{
    worker_wait();
    sink += arg != NULL;
    return NULL;
}

int main(void)
{
    pthread_t t;
    if (pthread_create(&t, NULL, worker, NULL) != 0)
        return 1;
    while (!worker_started)
        usleep(1000);
    puts("ready");
    fflush(stdout);
    while (outer(0) > 0) {
        puts("pong");
        fflush(stdout);
    }
    return sink == 12345;
}
